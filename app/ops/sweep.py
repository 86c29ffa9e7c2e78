"""A sweep: score a grid of metric configurations, then read their table."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from meaningbench.jobs.sweep_plan import SweepRequest, plan_sweep, split_list
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.analysis.sweep_table import SweepTable

# The request and its checks, which the page runs before it starts the sweep.
__all__ = ["SweepRequest", "plan_sweep", "split_list", "sweep_job"]


def sweep_job(
    ctx: JobContext,
    request: SweepRequest,
    dimension: str = "meaning",
    n_boot: int = 1000,
    rank_by: str = "pearson",
    *,
    labels: str | None = None,
    seed: int = 0,
) -> Wrote[SweepTable]:
    """The sweep and its table, as one background job (the app runs it in a child
    process; `meaningbench sweep` under its progress bar). Its configurations are new
    runs, so the screens' score columns change. The table's `extra` holds the passes and
    each run's status."""
    from meaningbench.jobs.sweep import run_sweep
    from meaningbench.queries.sweep import load_sweep_table

    outcome = run_sweep(request, ctx)
    ctx.progress(0, None, "Correlating with the human scores", force=True)
    table = load_sweep_table(
        request.study_path,
        outcome,
        dimension=dimension,
        labels=labels,
        n_boot=n_boot,
        seed=seed,
        rank_by=rank_by,
    )
    statuses = {s.label: s.status for s in outcome.summaries}
    table = replace(table, extra={**table.extra, "passes": outcome.passes, "statuses": statuses})
    return Wrote(table, StudyChanges(runs=True))
