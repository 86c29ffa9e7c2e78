"""The battery: score a study's items with a list of metrics (a child-process job)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.jobs.metric_listing import MetricListing
    from meaningbench.jobs.score_runs import MetricRunSummary

# The result types are named here for the dialog that shows them.
__all__ = ["MetricListing", "MetricRunSummary", "list_metrics_job", "score_job"]


def list_metrics_job(_ctx: JobContext, study_path: Path | None) -> list[MetricListing]:
    """What the battery offers (a read, in the child: it imports every metric library)."""
    from meaningbench.jobs.metric_listing import list_metrics

    return list_metrics(study_path)


def score_job(
    ctx: JobContext, study_path: Path, metrics: list[str], options: dict[str, Any]
) -> Wrote[list[MetricRunSummary]]:
    """Score the study; each committed batch is told at once (`ctx.changed`), so screens
    show new scores while the battery runs. Returns the run summaries and every change."""
    from meaningbench.jobs.scoring import ScoreRequest, score_study

    scored: dict[str, set[int]] = {}

    def on_batch(label: str, item_ids: list[int]) -> None:
        scored.setdefault(label, set()).update(item_ids)
        ctx.changed(StudyChanges.of(scores={label: item_ids}))

    request = ScoreRequest(study_path=study_path, metrics=metrics, options=options)
    summaries = score_study(request, ctx, on_batch=on_batch)
    # New or finished runs change the lists of score columns, scores or not; a battery that
    # made no run (cancelled before it began, every metric unavailable) changed no list.
    # The batches are gathered once, not joined batch by batch, which took time growing
    # with the square of their number.
    made_runs = any(s.run_id is not None for s in summaries)
    return Wrote(summaries, StudyChanges.of(scores=scored, runs=made_runs))
