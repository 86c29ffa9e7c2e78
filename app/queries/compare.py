"""What the comparison view shows for one source sentence, read from the study.

Queries are limited to the items of one source group, so opening a source in a study with
millions of scores stays instant. Current ratings only; an item's human score is the one
rule of `meaningbench.analysis.human` (each rater's ratings averaged first, then the raters;
aggregate labels where no rater rated); per (metric, config) the newest non-error score,
named by the same column names as every other table (`meaningbench.analysis.score_columns`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from sqlalchemy import text
from sqlalchemy.orm import Session

from meaningbench.analysis.human import item_scores, source_means
from meaningbench.analysis.label_sets import resolve_label_sets, select_labels
from meaningbench.analysis.score_columns import runs_frame


@dataclass
class SystemRow:
    item_id: int
    system: str
    output: str
    references: list[str]
    # Per-rater source -> its mean rating of the item (a named rater's repeated ratings,
    # or a dataset's anonymous ratings, averaged for display).
    ratings: dict[str, float] = field(default_factory=dict)
    aggregate: dict[str, float] = field(default_factory=dict)  # published means (kind aggregate)
    metrics: dict[str, float] = field(default_factory=dict)  # column -> 0–100 value
    # The item's human score and the raters behind it, by the one rule.
    mean: float | None = None
    n_raters: int = 0


@dataclass
class SourceComparison:
    source_group: str
    source: str
    dimension: str
    rows: list[SystemRow]
    raters: list[str]  # human raters, in name order
    aggregates: list[str]  # aggregate annotators (a dataset's published mean)
    metrics: list[str]  # score columns present for these items


@dataclass(frozen=True)
class SourceEntry:
    source_group: str
    source: str
    n_items: int


def _in(name: str, values: Sequence[object]) -> tuple[str, dict[str, object]]:
    params = {f"{name}{i}": v for i, v in enumerate(values)}
    return "(" + ", ".join(f":{k}" for k in params) + ")", params


def list_sources(session: Session) -> list[SourceEntry]:
    """Every source sentence with regular items, in the order it was first imported."""
    rows = session.execute(
        text(
            """
            SELECT source_group, MIN(id) AS first_id, COUNT(*) AS n
            FROM item WHERE kind = 'regular'
            GROUP BY source_group ORDER BY first_id
            """
        )
    ).all()
    if not rows:
        return []
    clause, params = _in("i", [r.first_id for r in rows])
    sources = dict(
        session.execute(text(f"SELECT id, source FROM item WHERE id IN {clause}"), params).all()
    )
    return [SourceEntry(r.source_group, sources[r.first_id], int(r.n)) for r in rows]


def group_of_item(session: Session, item_id: int) -> str | None:
    return session.execute(
        text("SELECT source_group FROM item WHERE id = :i"), {"i": item_id}
    ).scalar()


def dimensions(session: Session) -> list[str]:
    return list(
        session.execute(text("SELECT name FROM dimension ORDER BY active DESC, position")).scalars()
    )


def load_comparison(
    session: Session, source_group: str, dimension: str = "meaning"
) -> SourceComparison:
    items = session.execute(
        text(
            """
            SELECT id, source, output, refs, system FROM item
            WHERE source_group = :g AND kind = 'regular' ORDER BY id
            """
        ),
        {"g": source_group},
    ).all()
    rows = [
        SystemRow(
            item_id=int(r.id),
            system=r.system or f"item {r.id}",
            output=r.output,
            references=json.loads(r.refs) if isinstance(r.refs, str) else list(r.refs or []),
        )
        for r in items
    ]
    by_id = {row.item_id: row for row in rows}
    raters: set[str] = set()
    aggregates: set[str] = set()
    metrics: list[str] = []
    if rows:
        clause, params = _in("i", list(by_id))
        ratings = session.execute(
            text(
                f"""
                SELECT r.item_id, a.name, a.kind, r.value FROM rating r
                JOIN annotator a ON a.id = r.annotator_id
                JOIN dimension d ON d.id = r.dimension_id
                WHERE r.state = 'current' AND d.name = :dim AND r.item_id IN {clause}
                ORDER BY r.id
                """
            ),
            {**params, "dim": dimension},
        ).all()
        frame = pd.DataFrame(ratings, columns=["item_id", "annotator", "annotator_kind", "value"])
        shown = source_means(frame)
        for item_id, name, kind, value in zip(
            shown["item_id"], shown["annotator"], shown["annotator_kind"], shown["value"],
            strict=True,
        ):  # fmt: skip
            if kind == "aggregate":
                by_id[item_id].aggregate[name] = float(value)
                aggregates.add(name)
            else:
                by_id[item_id].ratings[name] = float(value)
                raters.add(name)
        scores = item_scores(select_labels(frame, resolve_label_sets(session)))
        for item_id, score, n in zip(
            scores["item_id"], scores["score"], scores["n_raters"], strict=True
        ):
            row = by_id[int(item_id)]
            row.mean = None if math.isnan(score) else float(score)
            row.n_raters = int(n) if row.ratings else 0
        metrics = _attach_scores(session, by_id, clause, params)
    source = items[0].source if items else ""
    return SourceComparison(
        source_group, source, dimension, rows, sorted(raters), sorted(aggregates), metrics
    )


def _attach_scores(
    session: Session, by_id: dict[int, SystemRow], clause: str, params: dict[str, object]
) -> list[str]:
    scores = session.execute(
        text(
            f"""
            SELECT s.item_id, m.metric, m.config_hash, s.value FROM score s
            JOIN metric_run m ON m.id = s.run_id
            WHERE s.error IS NULL AND s.value IS NOT NULL AND s.item_id IN {clause}
            ORDER BY s.run_id
            """
        ),
        params,
    ).all()
    if not scores:
        return []
    runs = runs_frame(session)
    column = {
        (m, h): c
        for m, h, c in zip(runs["metric"], runs["config_hash"], runs["column"], strict=True)
    }
    seen: list[str] = []
    for item_id, metric, config_hash, value in scores:  # newest run last: it wins
        name = column.get((metric, config_hash), metric)
        by_id[item_id].metrics[name] = float(value)
        if name not in seen:
            seen.append(name)
    order = {c: n for n, c in enumerate(runs["column"])}
    return sorted(seen, key=lambda c: order.get(c, len(order)))


@dataclass(frozen=True)
class StoredScore:
    run_id: int
    label: str
    value: float | None
    details: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)


def stored_scores(session: Session, item_id: int, metric: str) -> list[StoredScore]:
    """The newest score of each config of `metric` for one item, newest config first."""
    rows = session.execute(
        text(
            """
            SELECT m.id, m.label, m.config_hash, s.value, s.details, m.config FROM score s
            JOIN metric_run m ON m.id = s.run_id
            WHERE s.item_id = :i AND m.metric = :m AND s.error IS NULL
            ORDER BY s.run_id DESC
            """
        ),
        {"i": item_id, "m": metric},
    ).all()
    out: list[StoredScore] = []
    seen: set[str] = set()
    for run_id, label, config_hash, value, details, config in rows:
        if config_hash in seen:
            continue
        seen.add(config_hash)
        parsed = json.loads(details) if isinstance(details, str) else (details or {})
        cfg = json.loads(config) if isinstance(config, str) else (config or {})
        out.append(StoredScore(int(run_id), label or metric, value, parsed, cfg))
    return out
