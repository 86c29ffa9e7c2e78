"""Merge another study's ratings into this one (the merge dialog's write)."""

from __future__ import annotations

from pathlib import Path

from meaningbench.annotation.merge import MergeReport, merge_ratings
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

__all__ = ["MergeReport", "merge_job"]


def merge_job(study: StudyHandle, other: Path) -> Job[Wrote[MergeReport]]:
    """Merge `other` into the open `study`; the job's value is the merge report. Items,
    raters and ratings may all be new, so every screen reloads."""

    def run(_ctx: JobContext) -> Wrote[MergeReport]:
        report = merge_ratings(study_of(study), other)
        return Wrote(report, StudyChanges(everything=True))

    return run
