"""A rating and its undo: the instant writes of the annotation screens, and the opening of
the rater's queue they write to.

They run on the GUI thread through `JobRunner.run_now` (a keypress must not wait for a
thread) and return what they changed like every other write: the rated items. The screens
hold a read-only cursor over the rater's queue (`meaningbench.queries.rating_cursor`); the
ops take it and write through the engine session behind it. Opening one is a write (the
rater and their queue are stored when new), so it is an op too, whose value is the cursor.
The rating screens' other writes follow the same pattern: `meaningbench.ops.skip`,
`meaningbench.ops.flag` and `meaningbench.ops.practice`.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.side_by_side import SideBySideSession
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.queries.rating_cursor import (
    ItemCursor,
    UnitCursor,
    session_of,
    side_by_side_of,
)
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.annotation.model import ShownItem
    from meaningbench.annotation.proposals import ProposalFate
    from meaningbench.annotation.side_by_side import ShownUnit
    from meaningbench.annotation.spans import Span


def _open_rating(study: StudyHandle, annotator: str, _ctx: JobContext) -> Wrote[ItemCursor]:
    # A new rater's queue is theirs alone: nothing another screen shows has changed.
    return Wrote(ItemCursor(AnnotationSession(study_of(study), annotator)))


def open_rating(study: StudyHandle, annotator: str) -> Job[Wrote[ItemCursor]]:
    """The annotator's queue on the open study, one item at a time (the rater and their
    queue are stored when new); the job's value is the cursor the screen reads."""
    return partial(_open_rating, study, annotator)


def _open_side_by_side(study: StudyHandle, annotator: str, _ctx: JobContext) -> Wrote[UnitCursor]:
    # As `_open_rating`: a new rater's queue is no other screen's.
    session = AnnotationSession(study_of(study), annotator)
    return Wrote(UnitCursor(SideBySideSession(session)))


def open_side_by_side(study: StudyHandle, annotator: str) -> Job[Wrote[UnitCursor]]:
    """The annotator's queue on a study of the side-by-side protocol, a source's outputs at
    a time (the rater and their queue are stored when new); the job's value is the cursor."""
    return partial(_open_side_by_side, study, annotator)


def submit_rating(
    cursor: ItemCursor,
    item_id: int,
    values: dict[str, float],
    starts: dict[str, float | None],
    shown_at: datetime | None,
    spans: tuple[Span, ...] = (),
    proposals: tuple[ProposalFate, ...] = (),
) -> Job[StudyChanges]:
    """Store one item's ratings (all its dimensions, in one transaction), with its error
    spans and what became of the pre-filled ones."""

    def run(_ctx: JobContext) -> StudyChanges:
        session_of(cursor).submit(
            item_id, values, starts, shown_at, spans=spans, proposals=proposals
        )
        return StudyChanges.of(ratings=[item_id])

    return run


def _undo(cursor: ItemCursor, _ctx: JobContext) -> Wrote[ShownItem | None]:
    item = session_of(cursor).undo_last()
    ids = [] if item is None else [item.item_id]
    return Wrote(item, StudyChanges.of(ratings=ids))


def undo_rating(cursor: ItemCursor) -> Job[Wrote[ShownItem | None]]:
    """Withdraw the annotator's latest rating; the job's value is the item shown again."""
    return partial(_undo, cursor)


def submit_unit(
    cursor: UnitCursor,
    unit: ShownUnit,
    values: dict[int, float],
    starts: dict[int, float | None],
) -> Job[StudyChanges]:
    """Store a side-by-side unit's ratings, one per output."""

    def run(_ctx: JobContext) -> StudyChanges:
        side_by_side_of(cursor).submit_unit(unit, values, starts)
        return StudyChanges.of(ratings=unit.item_ids)

    return run


def _undo_unit(cursor: UnitCursor, _ctx: JobContext) -> Wrote[ShownUnit | None]:
    unit = side_by_side_of(cursor).undo_unit()
    return Wrote(unit, StudyChanges.of(ratings=() if unit is None else unit.item_ids))


def undo_unit(cursor: UnitCursor) -> Job[Wrote[ShownUnit | None]]:
    """Withdraw the latest side-by-side unit; the job's value is the unit shown again."""
    return partial(_undo_unit, cursor)
