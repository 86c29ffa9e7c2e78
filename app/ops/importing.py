"""Import a file of items and ratings into a study (a child-process job)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.datasets.mapping import UserMapping
    from meaningbench.datasets.report import ImportReport

# The result type is named here for the dialog that shows it.
__all__ = ["ImportReport", "import_job"]


def import_job(
    ctx: JobContext,
    study_path: Path,
    file: Path,
    fmt: str,
    mapping: UserMapping | Sequence[str] | None,
    dataset: str | None,
    system: str | None,
    ratings: str | None = None,
    language: str | None = None,
    drop: list[str] | None = None,
) -> Wrote[ImportReport]:
    """The import's report; the study changed wholesale (items, ratings, datasets)."""
    from meaningbench.datasets.importer import import_file
    from meaningbench.queries.files import open_study

    study = open_study(study_path)
    try:
        report = import_file(
            study,
            file,
            fmt=fmt,
            mapping=mapping,
            dataset=dataset,
            system=system,
            ratings=ratings,
            language=language,
            drop=drop,
            progress=lambda done, total, msg: ctx.progress(done, total, msg),
            cancel=ctx.cancel,
        )
    finally:
        study.close()
    return Wrote(report, StudyChanges(everything=True))
