"""Settling a disagreement between raters: the lead's decision on one item, written to a
resolution label set (`meaningbench.analysis.resolutions`), never over the ratings.

Finding the disagreements is a read (`meaningbench.analysis.disagreements`)."""

from __future__ import annotations

from pathlib import Path

from meaningbench.analysis.resolutions import DEFAULT_SET, Decision, Resolution, resolve_item
from meaningbench.db.study import open_study
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote


def resolve_job(
    path: Path,
    item_id: int,
    decision: Decision,
    *,
    score: float | None = None,
    dimension: str = "meaning",
    label_set: str = DEFAULT_SET,
    note: str | None = None,
) -> Job[Wrote[Resolution]]:
    """Settle the item: an adjudicated `score`, "keep-all" or "exclude" (an earlier decision
    on it is superseded)."""

    def run(_ctx: JobContext) -> Wrote[Resolution]:
        with open_study(path) as study, study.session(write=True) as session:
            done = resolve_item(
                session,
                item_id,
                decision,
                score=score,
                dimension=dimension,
                label_set=label_set,
                note=note,
            )
        return Wrote(done, StudyChanges.of(label_sets=[label_set]))

    return run
