"""Skipping: an unrated item (or a side-by-side unit's outputs) goes to the end of the
rater's queue and comes back later.

Instant writes like a rating (`meaningbench.ops.rate`): they run on the GUI thread through
`JobRunner.run_now`, on the screen's own session. A skip moves entries of the rater's own
queue, which no other screen shows: it changes nothing a screen refreshes from.
"""

from __future__ import annotations

from functools import partial

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.side_by_side import ShownUnit, SideBySideSession
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import EMPTY, StudyChanges


def _skip(session: AnnotationSession, item_id: int, _ctx: JobContext) -> StudyChanges:
    session.skip(item_id)
    return EMPTY


def skip_item(session: AnnotationSession, item_id: int) -> Job[StudyChanges]:
    """Move an unrated item to the end of the rater's queue (a rated one stays where it is)."""
    return partial(_skip, session, item_id)


def _skip_unit(sxs: SideBySideSession, unit: ShownUnit, _ctx: JobContext) -> StudyChanges:
    sxs.skip_unit(unit)
    return EMPTY


def skip_unit(sxs: SideBySideSession, unit: ShownUnit) -> Job[StudyChanges]:
    """Move a side-by-side unit's unrated outputs to the end of the rater's queue."""
    return partial(_skip_unit, sxs, unit)
