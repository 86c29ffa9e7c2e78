"""The label audit's writes: add a fixed label set, choose the set analyses read.

The audit itself and the fix's preview are reads, started as jobs beside them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.jobs.audit import AuditView, audit_job, preview_fix_job
from meaningbench.jobs.audit import choose_job as _choose
from meaningbench.jobs.audit import fix_job as _fix
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.analysis.audit import AuditResult
    from meaningbench.analysis.label_sets import FixResult

# The result types are named here for the screens that show them.
__all__ = [
    "AuditResult",
    "AuditView",
    "FixResult",
    "audit_job",
    "choose_job",
    "fix_job",
    "preview_fix_job",
]


def fix_job(
    path: Path,
    name: str,
    keep_unmatched: bool,
    choose: bool,
    raters: list[str] | None = None,
    *,
    audit: AuditResult | None = None,
) -> Job[Wrote[FixResult]]:
    """Add the label set `name` from the raw ratings (and make it the one read, if asked):
    those of `raters` audited now, or the `audit` already made."""
    write = _fix(path, name, keep_unmatched, choose, raters, audit=audit)

    def run(ctx: JobContext) -> Wrote[FixResult]:
        return Wrote(write(ctx), StudyChanges.of(label_sets=[name]))

    return run


def choose_job(path: Path, name: str | None) -> Job[StudyChanges]:
    """Make `name` the label set analyses read (None: the published labels)."""
    write = _choose(path, name)

    def run(ctx: JobContext) -> StudyChanges:
        write(ctx)
        return StudyChanges.of(label_sets=[name or ""])

    return run
