"""A sweep: score a grid of metric configurations, then read their table."""

from __future__ import annotations

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
) -> Wrote[SweepTable]:
    """The sweep's table; its configurations are new runs, so score columns change."""
    from meaningbench.queries.sweep import sweep_job as sweep

    return Wrote(sweep(ctx, request, dimension, n_boot, rank_by), StudyChanges(runs=True))
