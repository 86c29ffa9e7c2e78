"""Skipping: an unrated item (or a side-by-side unit's outputs) goes to the end of the
rater's queue and comes back later.

Instant writes like a rating (`meaningbench.ops.rate`): they run on the GUI thread through
`JobRunner.run_now`, through the session behind the screen's cursor. A skip moves entries
of the rater's own queue, which no other screen shows: it changes nothing a screen
refreshes from.
"""

from __future__ import annotations

from functools import partial

from meaningbench.annotation.side_by_side import ShownUnit
from meaningbench.queries.rating_cursor import ItemCursor, UnitCursor, session_of, side_by_side_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import EMPTY, StudyChanges


def _skip(cursor: ItemCursor, item_id: int, _ctx: JobContext) -> StudyChanges:
    session_of(cursor).skip(item_id)
    return EMPTY


def skip_item(cursor: ItemCursor, item_id: int) -> Job[StudyChanges]:
    """Move an unrated item to the end of the rater's queue (a rated one stays where it is)."""
    return partial(_skip, cursor, item_id)


def _skip_unit(cursor: UnitCursor, unit: ShownUnit, _ctx: JobContext) -> StudyChanges:
    side_by_side_of(cursor).skip_unit(unit)
    return EMPTY


def skip_unit(cursor: UnitCursor, unit: ShownUnit) -> Job[StudyChanges]:
    """Move a side-by-side unit's unrated outputs to the end of the rater's queue."""
    return partial(_skip_unit, cursor, unit)
