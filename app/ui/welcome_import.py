"""Import ratings… from the welcome page: a rating file becomes a new study.

With no study open there is nothing to import into, so the welcome page asks for the
rating file, then for where the new study goes (by default the studies folder, named
after the file), creates that study and opens the import dialog on the file: the user
checks the column mapping and the preview there, as for any import. Closing the dialog
before anything was imported removes that new, empty study again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog

from meaningbench.queries.files import discard_if_empty, holds_nothing
from meaningbench.settings import STUDY_SUFFIX, studies_dir
from meaningbench.ui.dialogs.import_file import FILE_FILTER
from meaningbench.ui.study_controller import STUDY_FILTER


def free_study_path(folder: Path, stem: str) -> Path:
    """`folder/stem.mbstudy`, or `stem-2.mbstudy`, … when that name is taken."""
    path = folder / f"{stem}{STUDY_SUFFIX}"
    n = 2
    while path.exists():
        path = folder / f"{stem}-{n}{STUDY_SUFFIX}"
        n += 1
    return path


def import_into_new_study(window: Any, ratings: Path, study: Path) -> Any:
    """Create `study`, open it in `window` and show the import dialog on `ratings`.

    Returns the import dialog, or None when the study could not be created (the window
    has then said why)."""
    if not window.studies.create_path(study):
        return None
    dialog = window.show_import_dialog()
    dialog.set_file(ratings)
    # Closed before anything was imported: the study made for it would be an empty file
    # nobody asked for, so it goes and the welcome page comes back.
    dialog.finished.connect(lambda _code: _discard_unused(window, study))
    return dialog


def _discard_unused(window: Any, study: Path) -> None:
    if window.context.path != study or not holds_nothing(study):
        return
    window.studies.close_study()
    if discard_if_empty(study):
        window.studies.forget(study)


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
