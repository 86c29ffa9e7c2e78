"""Import a file of items and ratings into a study, or into a new one (a child-process job).

Both front ends import through `import_job`: the import dialog (in a process of its own)
and `meaningbench import`. A new study is built under a hidden partial name beside its
target and given its name only once the import has committed, so an import that fails,
is cancelled or is killed at any point leaves no empty or half-made study under the name
the user chose.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.datasets.mapping import UserMapping
    from meaningbench.datasets.report import ImportReport
    from meaningbench.db.study import Study

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
    *,
    encoding: str = "utf-8",
    new: bool = False,
    same_raters: bool = False,
    rater_prefix: str = "",
) -> Wrote[ImportReport]:
    """The import's report; the study changed wholesale (items, ratings, datasets).

    `new`: `study_path` does not exist yet and is made by this import, or not at all.
    `same_raters`, `rater_prefix`: how the file's rater ids meet the study's (`RaterIds`)."""
    from meaningbench.datasets.importer import RaterIds, import_file

    def run(study: Study) -> ImportReport:
        return import_file(
            study,
            file,
            fmt=fmt,
            mapping=mapping,
            dataset=dataset,
            system=system,
            encoding=encoding,
            ratings=ratings,
            language=language,
            drop=drop,
            raters=RaterIds(same=same_raters, prefix=rater_prefix),
            progress=lambda done, total, msg: ctx.progress(done, total, msg),
            cancel=ctx.cancel,
        )

    report = _into_new_study(study_path, run) if new else _into_study(study_path, run)
    return Wrote(report, StudyChanges(everything=True))


def _into_study(path: Path, run: Callable[[Study], ImportReport]) -> ImportReport:
    from meaningbench.queries.files import open_study

    study = open_study(path)
    try:
        return run(study)
    finally:
        study.close()


def _into_new_study(target: Path, run: Callable[[Study], ImportReport]) -> ImportReport:
    from meaningbench.db.partials import part_path, remove_stale_parts
    from meaningbench.db.study import create_study, publish_study, remove_study_files

    _refuse_dangling_link(target)
    # What a killed import left beside the target goes first (partials of processes gone).
    remove_stale_parts(target.parent if str(target.parent) else Path("."))
    built = part_path(target)
    study = create_study(built, shown_as=target)
    try:
        report = run(study)
        study.close()
        publish_study(built, target)
    except BaseException:
        study.close()
        remove_study_files(built)  # the study did not exist before: leave none
        raise
    return report


def _refuse_dangling_link(target: Path) -> None:
    from meaningbench.db.errors import StudyFileError

    if target.is_symlink() and not target.exists():
        # Publishing the new study would meet the link and take it for a file another
        # program made meanwhile: say what is there instead.
        raise StudyFileError(
            f"{target}: a symbolic link to {os.readlink(target)}, which does not exist; "
            "nothing was imported. Import into the file the link should point to, or "
            "remove the link."
        )
