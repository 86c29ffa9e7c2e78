"""The practice block: a new rater's answers to the practice pairs, with feedback on each.

An answer is an instant write like a rating (`meaningbench.ops.rate`): it runs on the GUI
thread through `JobRunner.run_now`. Practice answers are stored apart from ratings and no
screen shows them (`meaningbench practice` reports them): an answer changes nothing a
screen refreshes from.
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
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import Wrote

__all__ = ["PracticeSession", "add_practice_items", "answer_practice", "practice_session"]

# A practice pair as a file gives it: source, output, the range of right answers (low,
# high) and why.
PracticeRow = tuple[str, str, float, float, str]


def practice_session(study: StudyHandle, annotator: str) -> PracticeSession:
    """The annotator's practice on the open study: items with gold answers, feedback."""
    return PracticeSession(study_of(study), annotator)


def _answer(
    session: PracticeSession, practice: Practice, value: float, _ctx: JobContext
) -> Wrote[Feedback]:
    return Wrote(session.answer(practice, value))


def answer_practice(
    session: PracticeSession, practice: Practice, value: float
) -> Job[Wrote[Feedback]]:
    """Store the rater's answer to a practice pair; the job's value is the feedback on it."""
    return partial(_answer, session, practice, value)


def _add(study: StudyHandle, rows: list[PracticeRow], _ctx: JobContext) -> Wrote[int]:
    return Wrote(add_practice(study_of(study), rows))


def add_practice_items(study: StudyHandle, rows: Sequence[PracticeRow]) -> Job[Wrote[int]]:
    """Add practice pairs (source, output, low, high, explanation) after those there; the
    job's value is how many. No screen shows practice items: nothing to refresh."""
    return partial(_add, study, list(rows))
