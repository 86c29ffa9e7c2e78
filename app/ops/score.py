"""The battery: score a study's items with a list of metrics (a child-process job); and the
repair of the runs a killed battery left `running`, which `meaningbench info` makes before
it counts them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.jobs.metric_listing import MetricListing
    from meaningbench.jobs.score_runs import MetricRunSummary
    from meaningbench.queries.files import StudyHandle

# The result types are named here for the dialog that shows them.
__all__ = [
    "MetricListing",
    "MetricRunSummary",
    "close_gone_runs",
    "list_metrics_job",
    "score_job",
]


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


def close_gone_runs(handle: StudyHandle) -> Job[Wrote[list[int]]]:
    """Mark the runs left `running` by a process that is gone (a killed `score`, a power
    cut) as interrupted; the job's value is their ids. Where none is found (most studies),
    nothing is written and nothing changed."""

    def run(_ctx: JobContext) -> Wrote[list[int]]:
        from meaningbench.db.runs import interrupt_gone_runs
        from meaningbench.queries.files import study_of

        closed = interrupt_gone_runs(study_of(handle))
        return Wrote(closed, StudyChanges(runs=bool(closed)))

    return run
