"""The practice block: a new rater's answers to the practice pairs, with feedback on each.

An answer is an instant write like a rating (`meaningbench.ops.rate`): it runs on the GUI
thread through `JobRunner.run_now`. Practice answers are stored apart from ratings and no
screen shows them (`meaningbench practice` reports them): an answer changes nothing a
screen refreshes from.
"""

from __future__ import annotations

from functools import partial

from meaningbench.annotation.practice import Feedback, Practice, PracticeSession
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import Wrote

__all__ = ["PracticeSession", "answer_practice", "practice_session"]


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
