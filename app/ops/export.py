"""Export a study to a file (a child-process job). Not a write: the study stays as it is."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.runtime import JobContext

if TYPE_CHECKING:
    from meaningbench.datasets.exporters import ExportReport

# The result type is named here for the dialog that shows it.
__all__ = ["ExportReport", "export_job"]


def export_job(
    ctx: JobContext, study_path: Path, out: Path, ratings: bool, raw_cells: bool = False
) -> ExportReport:
    from meaningbench.datasets.exporters import export_study
    from meaningbench.queries.files import open_study

    def progress(rows: int) -> None:
        ctx.check()  # a cancelled export leaves no file behind
        ctx.progress(rows, None, f"{rows:,} rows")

    study = open_study(study_path, allow_read_only=True)  # exporting only reads the study
    try:
        return export_study(study, out, ratings=ratings, raw_cells=raw_cells, progress=progress)
    except OSError as exc:
        # Writing the file failed (a full disk, a read-only folder): name the export.
        from meaningbench.queries.files import describe_fault

        fault = describe_fault(exc, out, output=True)
        if fault is None:
            raise
        raise fault from None
    finally:
        study.close()
