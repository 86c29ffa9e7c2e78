"""Flagging: an annotator's note on an item (flagged or not, with a comment), rated or not.

An instant write like a rating (`meaningbench.ops.rate`): it runs on the GUI thread through
`JobRunner.run_now`, through the session behind the screen's cursor (either screen's: the
side-by-side screen flags one of its outputs), and names the item in `StudyChanges.notes`,
so the browser's flag column and filter follow.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from meaningbench.queries.rating_cursor import RatingCursor, session_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges


def _flag(
    cursor: RatingCursor[Any],
    item_id: int,
    comment: str | None,
    flagged: bool,
    _ctx: JobContext,
) -> StudyChanges:
    session_of(cursor).flag(item_id, comment, flagged)
    return StudyChanges.of(notes=[item_id])


def flag_item(cursor: RatingCursor[Any], item_id: int, comment: str | None) -> Job[StudyChanges]:
    """Flag an item with an optional comment (a new note; the earlier ones stay)."""
    return partial(_flag, cursor, item_id, comment, True)


def unflag_item(cursor: RatingCursor[Any], item_id: int) -> Job[StudyChanges]:
    """Take the annotator's flag off an item (a new note saying so, without a comment)."""
    return partial(_flag, cursor, item_id, None, False)
