"""Bring the in-memory ratings of a StudyAnalysis up to date for a few items.

A change notification names items, not ratings (a submission, a revision and an undo
look alike), so the current ratings of those items are read back and reconciled by
rating id: new ratings are set, withdrawn or superseded ones removed. Reading a handful
of items is a millisecond; the full reload is kept for wholesale changes.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.analysis.live import StudyAnalysis
from meaningbench.db.models import Annotator, Dimension, Rating

CHUNK = 500  # SQLite's parameter limit is far above; keeps each IN list small


def current_ratings(
    session: Session, item_ids: list[int], dimension: str
) -> list[tuple[int, int, str, str, float]]:
    """(rating_id, item_id, annotator, annotator kind, value) of the items' current ratings."""
    rows: list[tuple[int, int, str, str, float]] = []
    for start in range(0, len(item_ids), CHUNK):
        chunk = item_ids[start : start + CHUNK]
        stmt = (
            select(Rating.id, Rating.item_id, Annotator.name, Annotator.kind, Rating.value)
            .join(Annotator, Annotator.id == Rating.annotator_id)
            .join(Dimension, Dimension.id == Rating.dimension_id)
            .where(
                Rating.item_id.in_(chunk),
                Rating.state == "current",
                Dimension.name == dimension,
            )
        )
        rows.extend(
            (int(r), int(i), str(n), str(k), float(v)) for r, i, n, k, v in session.execute(stmt)
        )
    return rows


def apply_rating_changes(analysis: StudyAnalysis, session: Session, item_ids: Iterable[int]) -> int:
    """Reconcile the analysis with the database for these items; returns how many of its
    ratings (regular items only) were added, revised or removed."""
    ratings = analysis.data.ratings
    known = ratings.item_ids
    ids = np.unique(np.asarray(list(item_ids), dtype=np.int64))
    if ids.size == 0 or known.size == 0:
        return 0
    at = np.clip(np.searchsorted(known, ids), 0, known.size - 1)
    regular = ids[known[at] == ids]
    if regular.size == 0:
        return 0
    # Labels of a label set the analysis does not read stay out, as they did at load.
    sets = analysis.data.label_sets
    wanted = {
        rid: (item_id, name, kind, value)
        for rid, item_id, name, kind, value in current_ratings(
            session, regular.tolist(), analysis.dimension
        )
        if kind != "aggregate" or sets is None or name in sets
    }
    existing = ratings.active_keys(regular)
    changed = 0
    for key in existing.keys() - wanted.keys():
        changed += ratings.discard(key)
    for rid, (item_id, name, kind, value) in wanted.items():
        if existing.get(rid) != (item_id, value):
            changed += analysis.set_rating(item_id, name, value, kind=kind, rating_id=rid)  # type: ignore[arg-type]
    return changed
