"""The scoring job's reads and writes, set-based: items in one query, the existing scores of a
(metric, config) in one query, each batch of scores in one transaction.

A (metric, config hash, item) keeps one score row: writing a fresh score deletes the stale
or failed row it replaces in the same transaction, so "newest score" never has to be
resolved between runs, and a cancelled run keeps exactly what it committed.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from meaningbench.db.models import RegisteredModel, utcnow
from meaningbench.db.study import Study, open_study
from meaningbench.errors import StudyNotFoundError
from meaningbench.metrics.base import ItemScore

from .metric_specs import RegisteredModelRef


@dataclass(slots=True)
class ItemText:
    id: int
    source: str
    output: str
    references: tuple[str, ...]
    system: str | None


def raw_connection(session: Session) -> sqlite3.Connection:
    """The session's DBAPI connection, inside its transaction."""
    raw = session.connection().connection.driver_connection
    assert isinstance(raw, sqlite3.Connection)
    return raw


def open_existing(path: Path | str, *, reading: bool = False) -> Study:
    """The job's own connection to a study that must exist (only imports create studies).

    `reading`: the job only reads, so a study it may not write is opened read-only."""
    if not Path(path).exists():
        raise StudyNotFoundError(f"{path}: no such study")
    return open_study(path, allow_read_only=reading)


def load_items(
    study: Study, item_ids: Sequence[int] | None = None, *, kinds: Sequence[str] | None = None
) -> list[ItemText]:
    """Items in id order; `item_ids=None` means all of them (regular and control)."""
    sql = "SELECT id, source, output, refs, system FROM item"
    params: tuple[Any, ...] = ()
    if kinds is not None:
        sql += f" WHERE kind IN ({','.join('?' * len(kinds))})"
        params = tuple(kinds)
    sql += " ORDER BY id"
    with study.session() as s:
        # The DBAPI cursor directly: SQLAlchemy's row objects cost more than SQLite here.
        rows = raw_connection(s).execute(sql, params).fetchall()
    if item_ids is not None:
        wanted = set(item_ids)
        rows = [row for row in rows if row[0] in wanted]
    loads = json.loads
    return [
        ItemText(
            item_id,
            source or "",
            output or "",
            tuple(loads(refs)) if refs and refs != "[]" else (),
            system,
        )
        for item_id, source, output, refs, system in rows
    ]


def registered_models(study: Study) -> list[RegisteredModelRef]:
    from sqlalchemy import select

    with study.session() as s:
        rows = s.execute(select(RegisteredModel).order_by(RegisteredModel.id)).scalars().all()
        return [RegisteredModelRef(r.name, r.metric.lower(), r.path) for r in rows]


def study_options(study: Study) -> dict[str, Any]:
    """What every metric may learn of the study: where the study lies (each planned metric
    reads it through `jobs.study_inputs`: SAMSA's scenes, BERTScore's references) and, as
    an option if it declares it, the language of its texts (which tokenizer, stemmer or
    formula a metric uses; part of its config hash, so languages never mix)."""
    from meaningbench.datasets.language import study_language

    return {"study": str(study.path), "language": study_language(study)}


@dataclass(frozen=True)
class CacheKey:
    """What identifies cached scores: a metric, its config hash, the reference mode whose
    resolved references its input hashes cover (None: no references)."""

    metric: str
    config_hash: str
    mode: str | None


# The (id, status) of each run of a (metric, config) as a cache check saw them: a claim
# goes through only while they are unchanged (see meaningbench.jobs.score_claims).
RunsSeen = tuple[tuple[int, str], ...]


@dataclass
class CacheState:
    current: set[int] | None  # ids of items whose score is current; None = all of them
    latest_run_id: int | None
    runs: RunsSeen = ()


def check_cache(
    study: Study,
    keys: Sequence[CacheKey],
    items: Sequence[ItemText],
    digests: Mapping[str | None, Sequence[str]],
) -> list[CacheState]:
    """For each key, which items already have a current score (error-free, same input hash).

    The expected hashes go into a temporary table once per reference mode and SQLite joins
    them with the score rows: when every item is current (a re-run with nothing to do, the
    case to make fast) only a count crosses into Python.
    """
    out: list[CacheState] = []
    with study.session() as s:
        raw = raw_connection(s)
        tables: dict[str | None, str] = {}
        for n, mode in enumerate(digests):
            table = f"temp.mb_expected_{n}"
            raw.execute(f"DROP TABLE IF EXISTS {table}")
            raw.execute(f"CREATE TABLE {table} (item_id INTEGER PRIMARY KEY, h TEXT NOT NULL)")
            raw.executemany(
                f"INSERT INTO {table} VALUES (?, ?)",
                zip((it.id for it in items), digests[mode], strict=True),
            )
            tables[mode] = table
        try:
            for key in keys:
                seen: RunsSeen = tuple(
                    (int(r[0]), str(r[1]))
                    for r in raw.execute(
                        "SELECT id, status FROM metric_run WHERE metric = ? AND config_hash = ? "
                        "ORDER BY id",
                        (key.metric, key.config_hash),
                    )
                )
                run_ids = [run_id for run_id, _ in seen]
                if not run_ids:
                    out.append(CacheState(set(), None, seen))
                    continue
                runs = ",".join(str(int(r)) for r in run_ids)
                joined = (
                    f"FROM score s JOIN {tables[key.mode]} e "
                    f"ON e.item_id = s.item_id AND e.h = s.input_hash "
                    f"WHERE s.run_id IN ({runs}) AND s.error IS NULL"
                )
                (n_current,) = raw.execute(f"SELECT COUNT(DISTINCT s.item_id) {joined}").fetchone()
                if n_current == len(items):
                    out.append(CacheState(None, max(run_ids), seen))
                else:
                    current = {r[0] for r in raw.execute(f"SELECT s.item_id {joined}")}
                    out.append(CacheState(current, max(run_ids), seen))
        finally:
            for table in tables.values():
                raw.execute(f"DROP TABLE IF EXISTS {table}")
    return out


def score_row_ids(study: Study, metric: str, config_hash: str) -> dict[int, list[int]]:
    """Every score row of a (metric, config), error rows included, by item."""
    sql = """
        SELECT s.item_id, s.id FROM score s JOIN metric_run r ON r.id = s.run_id
        WHERE r.metric = ? AND r.config_hash = ?
    """
    out: dict[int, list[int]] = {}
    with study.session() as s:
        for item_id, row_id in s.connection().exec_driver_sql(sql, (metric, config_hash)):
            out.setdefault(item_id, []).append(row_id)
    return out


def finish_run(
    study: Study,
    run_id: int,
    *,
    status: str,
    n_items: int,
    n_failed: int,
    elapsed_s: float,
    error: str | None = None,
    device: str | None = None,
) -> None:
    from meaningbench.db.models import MetricRun

    with study.session(write=True) as s:
        run = s.get(MetricRun, run_id)
        if run is None:
            return
        run.status = status
        run.n_items = n_items
        run.n_failed = n_failed
        run.elapsed_s = elapsed_s
        run.finished_at = utcnow()
        run.error = error
        if device:
            run.device = device


def _finite(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _details(details: dict[str, Any] | None) -> str | None:
    if not details:
        return None
    return json.dumps(details, ensure_ascii=False, default=str)


def write_scores(
    study: Study,
    run_id: int,
    item_ids: Sequence[int],
    hashes: Sequence[str],
    scores: Sequence[ItemScore],
    replaced_row_ids: Sequence[int],
) -> None:
    """One transaction: drop the rows these scores replace, insert the new ones."""
    with study.session(write=True) as s:
        store_scores(s.connection(), run_id, item_ids, hashes, scores, replaced_row_ids)


def store_scores(
    conn: Connection,
    run_id: int,
    item_ids: Sequence[int],
    hashes: Sequence[str],
    scores: Sequence[ItemScore],
    replaced_row_ids: Sequence[int],
) -> None:
    """Inside the caller's write transaction: drop the rows these scores replace, insert
    the new ones (a merge of results scored elsewhere writes many runs in one)."""
    rows = []
    for item_id, digest, score in zip(item_ids, hashes, scores, strict=True):
        value = _finite(score.value)
        error = score.error
        if error is None and value is None and score.raw is None and not score.not_computed:
            error = "the metric returned no value"
        rows.append(
            (
                run_id,
                item_id,
                None if error else value,
                None if error else _finite(score.raw),
                _details(score.details),
                error,
                digest,
            )
        )
    if replaced_row_ids:
        conn.exec_driver_sql(
            "DELETE FROM score WHERE id = ?", [(row_id,) for row_id in replaced_row_ids]
        )
    if rows:
        conn.exec_driver_sql(
            "INSERT INTO score (run_id, item_id, value, raw, details, error, input_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
