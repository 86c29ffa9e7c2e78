"""Span annotations imported from a file (`meaningbench spans import`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.annotation.span_io import SpanImport

__all__ = ["SpanImport", "import_spans_job"]


def import_spans_job(handle: StudyHandle, path: Path) -> Job[Wrote[SpanImport]]:
    """Read a spans JSONL file into the study as ratings of named raters, all or nothing;
    the job's value counts them. The file's ratings are not listed one by one: every
    screen reloads."""
    study = study_of(handle)

    def run(_ctx: JobContext) -> Wrote[SpanImport]:
        from meaningbench.annotation.span_io import import_spans

        return Wrote(import_spans(study, path), StudyChanges(everything=True))

    return run
