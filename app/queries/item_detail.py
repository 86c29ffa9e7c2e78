"""Everything the detail pane shows about one item: texts, ratings, scores, notes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from meaningbench.db.current_ratings import current_rating_sql
from meaningbench.db.frames import shown_scores_sql
from meaningbench.metrics.base import NOT_COMPUTED
from meaningbench.queries.raters import MACHINE_KIND, judge_and_model, machine_tooltip


@dataclass(frozen=True)
class RatingLine:
    annotator: str
    annotator_kind: str
    dimension: str
    value: float
    submitted_at: str | None
    duration_ms: int | None
    flagged: bool
    comment: str | None
    n_raters: int | None
    judge: str | None = None  # a machine rater's judge spec and model (annotator meta)
    model: str | None = None

    @property
    def machine(self) -> bool:
        return self.annotator_kind == MACHINE_KIND

    @property
    def machine_tooltip(self) -> str:
        return machine_tooltip(self.annotator, self.judge, self.model) if self.machine else ""


@dataclass(frozen=True)
class ScoreLine:
    metric: str
    config_hash: str
    label: str
    value: float | None
    raw: float | None
    details: dict[str, Any]
    error: str | None

    @property
    def not_computed(self) -> str | None:
        """Why the metric gave no value for this item (meaningbench.metrics.base), if it said."""
        reason = self.details.get(NOT_COMPUTED)
        return str(reason) if reason else None


@dataclass(frozen=True)
class NoteLine:
    annotator: str | None
    flagged: bool
    comment: str | None
    created_at: str | None


@dataclass(frozen=True)
class ItemDetail:
    item_id: int
    dataset: str
    system: str | None
    kind: str
    source: str
    output: str
    references: list[str]
    external_id: str | None
    parent_id: int | None
    meta: dict[str, Any]
    ratings: list[RatingLine] = field(default_factory=list)
    scores: list[ScoreLine] = field(default_factory=list)
    notes: list[NoteLine] = field(default_factory=list)


def _json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def _rating_line(r: Sequence[Any]) -> RatingLine:
    judge, model = judge_and_model(r[9]) if r[1] == MACHINE_KIND else (None, None)
    return RatingLine(
        annotator=r[0],
        annotator_kind=r[1],
        dimension=r[2],
        value=float(r[3]),
        submitted_at=r[4],
        duration_ms=r[5],
        flagged=bool(r[6]),
        comment=r[7],
        n_raters=r[8],
        judge=judge,
        model=model,
    )


def fetch_detail(conn: sqlite3.Connection, item_id: int) -> ItemDetail | None:
    row = conn.execute(
        """
        SELECT i.id, d.name, i.system, i.kind, i.source, i.output, i.refs, i.external_id,
               i.parent_id, i.meta
        FROM item i JOIN dataset d ON d.id = i.dataset_id WHERE i.id = ?
        """,
        (item_id,),
    ).fetchone()
    if row is None:
        return None
    ratings = [
        _rating_line(r)
        for r in conn.execute(
            f"""
            SELECT a.name, a.kind, dm.name, r.value, r.submitted_at, r.duration_ms, r.flagged,
                   r.comment, r.n_raters, a.meta
            FROM rating r JOIN annotator a ON a.id = r.annotator_id
            JOIN dimension dm ON dm.id = r.dimension_id
            WHERE r.item_id = ? AND {current_rating_sql()}
            ORDER BY dm.position, a.kind = '{MACHINE_KIND}', a.kind DESC, a.name
            """,
            (item_id,),
        )
    ]
    # The score that counts per (metric, config), or its newest error: the one rule.
    scores = [
        ScoreLine(r[0], r[1], r[2], r[3], r[4], _json(r[5], {}) or {}, r[6])
        for r in conn.execute(
            f"""
            SELECT c.metric, c.config_hash, m.label, c.value, c.raw, s.details, c.error
            FROM ({shown_scores_sql("s.item_id = :item")}) c
            JOIN metric_run m ON m.id = c.run_id
            JOIN score s ON s.run_id = c.run_id AND s.item_id = c.item_id
            """,
            {"item": item_id},
        )
    ]
    notes = [
        NoteLine(r[0], bool(r[1]), r[2], r[3])
        for r in conn.execute(
            """
            SELECT a.name, n.flagged, n.comment, n.created_at
            FROM item_note n LEFT JOIN annotator a ON a.id = n.annotator_id
            WHERE n.item_id = ? ORDER BY n.id
            """,
            (item_id,),
        )
    ]
    refs = _json(row[6], [])
    return ItemDetail(
        item_id=int(row[0]),
        dataset=row[1],
        system=row[2],
        kind=row[3],
        source=row[4],
        output=row[5],
        references=[str(x) for x in refs] if isinstance(refs, list) else [],
        external_id=row[7],
        parent_id=row[8],
        meta=_json(row[9], {}) or {},
        ratings=ratings,
        scores=sorted(scores, key=lambda s: (s.metric, s.label)),
        notes=notes,
    )
