"""The practice block: a new rater's answers to the practice pairs, with feedback on each.

An answer is an instant write like a rating (`meaningbench.ops.rate`): it runs on the GUI
thread through `JobRunner.run_now`, through the session behind the screen's cursor
(`meaningbench.queries.rating_cursor.PracticeCursor`), which an op opens since a new rater
is stored then. Practice answers are stored apart from ratings and no screen shows them
(`meaningbench practice` reports them): an answer changes nothing a screen refreshes from.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from meaningbench.annotation.practice import (
    Feedback,
    Practice,
    PracticeSession,
    add_practice,
)
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.queries.rating_cursor import PracticeCursor, practice_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import Wrote

# A practice pair as a file gives it: source, output, the range of right answers (low,
# high) and why.
PracticeRow = tuple[str, str, float, float, str]


def _open(study: StudyHandle, annotator: str, _ctx: JobContext) -> Wrote[PracticeCursor]:
    # A new rater is no other screen's to show until they rate.
    return Wrote(PracticeCursor(PracticeSession(study_of(study), annotator)))


def open_practice(study: StudyHandle, annotator: str) -> Job[Wrote[PracticeCursor]]:
    """The annotator's practice on the open study (stored as a rater when new); the job's
    value is the cursor over the pairs they have not answered."""
    return partial(_open, study, annotator)


def _answer(
    cursor: PracticeCursor, practice: Practice, value: float, _ctx: JobContext
) -> Wrote[Feedback]:
    return Wrote(practice_of(cursor).answer(practice, value))


def answer_practice(
    cursor: PracticeCursor, practice: Practice, value: float
) -> Job[Wrote[Feedback]]:
    """Store the rater's answer to a practice pair; the job's value is the feedback on it."""
    return partial(_answer, cursor, practice, value)


def _add(study: StudyHandle, rows: list[PracticeRow], _ctx: JobContext) -> Wrote[int]:
    return Wrote(add_practice(study_of(study), rows))


def add_practice_items(study: StudyHandle, rows: Sequence[PracticeRow]) -> Job[Wrote[int]]:
    """Add practice pairs (source, output, low, high, explanation) after those there; the
    job's value is how many. No screen shows practice items: nothing to refresh."""
    return partial(_add, study, list(rows))
