"""An LLM judge rates the study's items as a machine rater (`meaningbench judge
--as-rater`): its scores become that rater's ratings, kept apart from the human scores."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.jobs.judge_rater import JudgeRaterResult

__all__ = ["JudgeRaterResult", "judge_as_rater_job"]


def judge_as_rater_job(
    ctx: JobContext,
    study_path: Path,
    spec: str,
    rater: str,
    *,
    dimension: str = "meaning",
    device: str = "auto",
) -> Wrote[JudgeRaterResult]:
    """Score the study with the judge `spec`, then store its scores as the ratings of the
    machine rater `rater`; the job's value says how many. A new run and a new rater's
    ratings: every screen reloads."""
    from meaningbench.jobs.judge_rater import judge_as_rater

    result = judge_as_rater(study_path, spec, rater, ctx, dimension=dimension, device=device)
    return Wrote(result, StudyChanges(runs=True, everything=True))
