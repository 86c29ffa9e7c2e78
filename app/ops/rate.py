"""A rating and its undo: the instant writes of the annotation screens.

They run on the GUI thread through `JobRunner.run_now` (a keypress must not wait for a
thread), on the screen's own annotation session, and return what they changed like every
other write: the rated items. The rating screens' other writes follow the same pattern:
`meaningbench.ops.skip`, `meaningbench.ops.flag` and `meaningbench.ops.practice`.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.side_by_side import SideBySideSession
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.annotation.model import ShownItem
    from meaningbench.annotation.proposals import ProposalFate
    from meaningbench.annotation.side_by_side import ShownUnit
    from meaningbench.annotation.spans import Span

# The sessions a rating screen holds: what it shows next, and where its writes go.
__all__ = [
    "AnnotationSession",
    "SideBySideSession",
    "rating_session",
    "submit_rating",
    "submit_unit",
    "undo_rating",
    "undo_unit",
]


def rating_session(study: StudyHandle, annotator: str) -> AnnotationSession:
    """The annotator's rating session on the open study (created as a rater if new)."""
    return AnnotationSession(study_of(study), annotator)


def submit_rating(
    session: AnnotationSession,
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
        session.submit(item_id, values, starts, shown_at, spans=spans, proposals=proposals)
        return StudyChanges.of(ratings=[item_id])

    return run


def _undo(session: AnnotationSession, _ctx: JobContext) -> Wrote[ShownItem | None]:
    item = session.undo_last()
    ids = [] if item is None else [item.item_id]
    return Wrote(item, StudyChanges.of(ratings=ids))


def undo_rating(session: AnnotationSession) -> Job[Wrote[ShownItem | None]]:
    """Withdraw the annotator's latest rating; the job's value is the item shown again."""
    return partial(_undo, session)


def submit_unit(
    sxs: SideBySideSession,
    unit: ShownUnit,
    values: dict[int, float],
    starts: dict[int, float | None],
) -> Job[StudyChanges]:
    """Store a side-by-side unit's ratings, one per output."""

    def run(_ctx: JobContext) -> StudyChanges:
        sxs.submit_unit(unit, values, starts)
        return StudyChanges.of(ratings=unit.item_ids)

    return run


def _undo_unit(sxs: SideBySideSession, _ctx: JobContext) -> Wrote[ShownUnit | None]:
    unit = sxs.undo_unit()
    return Wrote(unit, StudyChanges.of(ratings=() if unit is None else unit.item_ids))


def undo_unit(sxs: SideBySideSession) -> Job[Wrote[ShownUnit | None]]:
    """Withdraw the latest side-by-side unit; the job's value is the unit shown again."""
    return partial(_undo_unit, sxs)
