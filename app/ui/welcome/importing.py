"""Import ratings… from the welcome page: a rating file becomes a new study.

With no study open there is nothing to import into, so the welcome page asks for the
rating file, then for where the new study goes (by default the studies folder, named
after the file), and opens the import dialog on the file for that new study: the user
checks the column mapping and the preview there, as for any import. The import makes the
study, as `meaningbench import` does (`meaningbench.ops.importing`): built aside and named
only once it has committed, then opened in the window. Closing the dialog before, or an
import that fails or is cancelled, leaves no study behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog

from meaningbench.queries.files import StudyFileError
from meaningbench.settings import STUDY_SUFFIX, studies_dir
from meaningbench.ui.dialogs.errors import show_exception
from meaningbench.ui.dialogs.import_file import FILE_FILTER, ImportDialog
from meaningbench.ui.study_controller import STUDY_FILTER


def free_study_path(folder: Path, stem: str) -> Path:
    """`folder/stem.mbstudy`, or `stem-2.mbstudy`, … when that name is taken."""
    path = folder / f"{stem}{STUDY_SUFFIX}"
    n = 2
    while path.exists():
        path = folder / f"{stem}-{n}{STUDY_SUFFIX}"
        n += 1
    return path


def import_into_new_study(window: Any, ratings: Path, study: Path) -> ImportDialog | None:
    """Show the import dialog on `ratings` for a new study at `study`; the study is made
    by the import and opened in `window` when it has committed.

    Returns the import dialog, or None when a file is already there (the window has then
    said so)."""
    if study.suffix != STUDY_SUFFIX:
        study = study.with_name(study.name + STUDY_SUFFIX)
    if study.exists():
        show_exception(
            window,
            "Cannot create the study",
            StudyFileError(f"{study}: a file already exists there"),
        )
        return None
    dialog = ImportDialog(window.context, window, new_study=study)
    dialog.study_made.connect(window.studies.open_path)
    dialog.set_file(ratings)
    dialog.show()
    return dialog


def ask_and_import(window: Any) -> Any:
    """The welcome page's Import ratings…: ask for the file and the new study's place."""
    ratings, _ = QFileDialog.getOpenFileName(
        window, "Import ratings: choose the rating file", str(Path.home()), FILE_FILTER
    )
    if not ratings:
        return None
    default = free_study_path(studies_dir(), Path(ratings).stem)
    study, _ = QFileDialog.getSaveFileName(
        window, "Import ratings: the new study", str(default), STUDY_FILTER
    )
    if not study:
        return None
    return import_into_new_study(window, Path(ratings), Path(study))
