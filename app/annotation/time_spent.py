"""The time a rater has spent rating, from what the study file records of each submission.

Each rating row keeps `duration_ms`, the time from showing its item to submitting it. One
submission writes a row per dimension (and, side by side, a row per output of the unit),
all with one submission time and one duration, so the time of a submission is counted once:
rows grouped by their submission time. Every submission counts, revised, superseded and
undone ones too: the rater spent that time. Ratings without a duration (imported, or given
before durations were kept) add nothing, so the figure never overstates.

What it cannot see: the time between submissions (a skip, reading the guidelines, a
pause with no item on screen), and a pause with an item on screen counts whole.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Select, func, select

from meaningbench.db.models import Rating
from meaningbench.db.study import Study

__all__ = ["SpentTally", "rating_time"]


def rating_time(study: Study, annotator_id: int) -> timedelta:
    """The sum of the durations of the annotator's submissions (each counted once)."""
    with study.session() as s:
        total = s.scalar(_sum_of_submissions(annotator_id, None))
    return timedelta(milliseconds=int(total or 0))


class SpentTally:
    """`rating_time` kept up to date for a screen that asks after every item: the first
    call adds up every submission, later calls only the rating rows written since (rows are
    never rewritten in place: a revision or an undo leaves the old row and, for a
    revision, adds one), so asking costs a look at the newest rows, not a pass over the
    rater's thousands (25 ms over 10,000 submissions)."""

    def __init__(self, study: Study, annotator_id: int) -> None:
        self._study = study
        self._annotator_id = annotator_id
        self._seen_id: int | None = None
        self._ms = 0

    def total(self) -> timedelta:
        with self._study.session() as s:
            if self._seen_id is None:
                self._seen_id = int(s.scalar(select(func.coalesce(func.max(Rating.id), 0))) or 0)
                self._ms = int(s.scalar(_sum_of_submissions(self._annotator_id, None)) or 0)
            else:
                self._ms += int(
                    s.scalar(_sum_of_submissions(self._annotator_id, self._seen_id)) or 0
                )
                self._seen_id = int(
                    s.scalar(select(func.coalesce(func.max(Rating.id), self._seen_id))) or 0
                )
        return timedelta(milliseconds=self._ms)


def _sum_of_submissions(annotator_id: int, after_id: int | None) -> Select[int]:
    """The durations of the annotator's submissions added up, each once; `after_id`: only
    those of rows after it (the annotator compared as `+ 0`, so that SQLite walks the few
    newest rows by id, not the annotator's index)."""
    if after_id is None:
        where = [Rating.annotator_id == annotator_id]
    else:
        where = [Rating.id > after_id, (Rating.annotator_id + 0) == annotator_id]
    per_submission = (
        select(func.max(Rating.duration_ms).label("ms"))
        .where(*where, Rating.duration_ms.is_not(None))
        .group_by(Rating.submitted_at)
        .subquery()
    )
    return select(func.coalesce(func.sum(per_submission.c.ms), 0))
