"""The scoring job's reads and writes, set-based: items in one query, the existing scores of a
(metric, config) in one query, each batch of scores in one transaction.

A (metric, config hash, item) keeps one score row: writing a fresh score deletes the stale
or failed row it replaces in the same transaction, so "newest score" never has to be
resolved between runs, and a cancelled run keeps exactly what it committed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.errors import StudyNotFoundError
from app.metrics.base import ItemScore, Metric
from db.models import RegisteredModel, utcnow
from db.study import Study, open_study

from .metric_specs import RegisteredModelRef


@dataclass(frozen=True)
class ItemText:
    id: int
    source: str
    output: str
    references: tuple[str, ...]
    system: str | None


@dataclass
class ExistingScores:
    """The scores one (metric, config) already has: valid hashes, and every row's id."""

    valid: dict[int, str]  # item id -> input hash of its error-free score
    row_ids: dict[int, list[int]] | None = None  # filled on demand (only when rewriting)
    latest_run_id: int | None = None


def open_existing(path: Path | str) -> Study:
    """The job's own connection to a study that must exist (only imports create studies)."""
    if not Path(path).exists():
        raise StudyNotFoundError(f"{path}: no such study")
    return open_study(path)


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
        rows = s.connection().exec_driver_sql(sql, params).fetchall()
    wanted = set(item_ids) if item_ids is not None else None
    out = []
    for item_id, source, output, refs, system in rows:
        if wanted is not None and item_id not in wanted:
            continue
        references = tuple(json.loads(refs)) if refs and refs != "[]" else ()
        out.append(ItemText(item_id, source or "", output or "", references, system))
    return out


def registered_models(study: Study) -> list[RegisteredModelRef]:
    from sqlalchemy import select

    with study.session() as s:
        rows = s.execute(select(RegisteredModel).order_by(RegisteredModel.id)).scalars().all()
        return [RegisteredModelRef(r.name, r.metric.lower(), r.path) for r in rows]


_EXISTING_SQL = """
    SELECT s.item_id, s.input_hash FROM score s JOIN metric_run r ON r.id = s.run_id
    WHERE r.metric = ? AND r.config_hash = ? AND s.error IS NULL
    ORDER BY s.run_id
"""


def existing_scores(study: Study, metric: str, config_hash: str) -> ExistingScores:
    with study.session() as s:
        conn = s.connection()
        # Ordered by run, so a newer score of an item overwrites an older one in the dict.
        valid = dict(conn.exec_driver_sql(_EXISTING_SQL, (metric, config_hash)).fetchall())
        latest = conn.exec_driver_sql(
            "SELECT MAX(id) FROM metric_run WHERE metric = ? AND config_hash = ?",
            (metric, config_hash),
        ).scalar()
    return ExistingScores(valid=valid, latest_run_id=latest)


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


def create_run(study: Study, metric: Metric, label: str) -> int:
    from db.models import MetricRun

    with study.session() as s:
        run = MetricRun(
            metric=metric.name,
            config=dict(metric.config),
            config_hash=metric.config_hash(),
            label=label,
            model_id=metric.model_id(),
            device=metric.device(),
            versions=dict(metric.versions()),
            status="running",
            started_at=utcnow(),
        )
        s.add(run)
        s.flush()
        return int(run.id)


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
    from db.models import MetricRun

    with study.session() as s:
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
    rows = []
    for item_id, digest, score in zip(item_ids, hashes, scores, strict=True):
        value = _finite(score.value)
        error = score.error
        if error is None and value is None and score.raw is None:
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
    with study.session() as s:
        conn = s.connection()
        if replaced_row_ids:
            conn.exec_driver_sql(
                "DELETE FROM score WHERE id = ?", [(row_id,) for row_id in replaced_row_ids]
            )
        conn.exec_driver_sql(
            "INSERT INTO score (run_id, item_id, value, raw, details, error, input_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
