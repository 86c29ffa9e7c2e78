"""Flagging: an annotator's note on an item (flagged or not, with a comment), rated or not.

An instant write like a rating (`meaningbench.ops.rate`): it runs on the GUI thread through
`JobRunner.run_now`, on the screen's own session, and names the item in
`StudyChanges.notes`, so the browser's flag column and filter follow.
"""

from __future__ import annotations

from functools import partial

from meaningbench.annotation.session import AnnotationSession
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges


def _flag(
    session: AnnotationSession,
    item_id: int,
    comment: str | None,
    flagged: bool,
    _ctx: JobContext,
) -> StudyChanges:
    session.flag(item_id, comment, flagged)
    return StudyChanges.of(notes=[item_id])


def flag_item(session: AnnotationSession, item_id: int, comment: str | None) -> Job[StudyChanges]:
    """Flag an item with an optional comment (a new note; the earlier ones stay)."""
    return partial(_flag, session, item_id, comment, True)


def unflag_item(session: AnnotationSession, item_id: int) -> Job[StudyChanges]:
    """Take the annotator's flag off an item (a new note saying so, without a comment)."""
    return partial(_flag, session, item_id, None, False)
