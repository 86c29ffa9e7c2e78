"""The jobs the window runs in child processes: list metrics, score, import, export.

Module-level functions `f(ctx, ...)`, pickled by name into the child; Qt-free, so the
child process never loads Qt. Each opens the study itself (one connection per process).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meaningbench.runtime import JobContext


def list_metrics_job(_ctx: JobContext, study_path: Path | None) -> list[dict[str, Any]]:
    from meaningbench.jobs.scoring import list_metrics

    return list_metrics(study_path)


def score_job(
    ctx: JobContext, study_path: Path, metrics: list[str], options: dict[str, Any]
) -> list[Any]:
    """The battery; each committed batch is sent to the window as a "batch" message."""
    from meaningbench.jobs.scoring import ScoreRequest, score_study

    def on_batch(label: str, item_ids: list[int]) -> None:
        ctx.send("batch", (label, [int(i) for i in item_ids]))

    request = ScoreRequest(study_path=study_path, metrics=metrics, options=options)
    return score_study(request, ctx, on_batch=on_batch)


def import_job(
    ctx: JobContext,
    study_path: Path,
    file: Path,
    fmt: str,
    mapping: Any,
    dataset: str | None,
    system: str | None,
    ratings: str | None = None,
    language: str | None = None,
    drop: list[str] | None = None,
) -> Any:
    from meaningbench.datasets.importer import import_file
    from meaningbench.queries.files import open_study

    study = open_study(study_path)
    try:
        return import_file(
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


def export_job(
    ctx: JobContext, study_path: Path, out: Path, ratings: bool, raw_cells: bool = False
) -> Any:
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
