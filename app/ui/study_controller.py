"""Opening, creating and closing studies from the window, and the recent-studies list."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from meaningbench.ops.demo import build_demo_job
from meaningbench.queries.files import demo_available
from meaningbench.settings import KIT_SUFFIX, STUDY_SUFFIX, UserPrefs, studies_dir
from meaningbench.ui.context import StudyContext
from meaningbench.ui.dialogs.errors import show_exception

STUDY_FILTER = f"MeaningBench studies (*{STUDY_SUFFIX});;All files (*)"
# A rater kit opens like a study (in rater mode).
OPEN_FILTER = (
    f"MeaningBench studies and rater kits (*{STUDY_SUFFIX} *{KIT_SUFFIX});;"
    f"Rater kits (*{KIT_SUFFIX});;All files (*)"
)
DEMO_FILE = f"demo{STUDY_SUFFIX}"


class StudyController(QObject):
    recent_changed = Signal(list)

    def __init__(self, context: StudyContext, prefs: UserPrefs, window: QWidget) -> None:
        super().__init__(window)
        self.context = context
        self.prefs = prefs
        self.window = window

    # -- by path (what tests and the command line use) --------------------------------

    def open_path(self, path: str | Path) -> bool:
        from meaningbench.queries.files import open_study

        path = Path(path)
        try:
            if not path.exists():
                from meaningbench.errors import StudyNotFoundError

                raise StudyNotFoundError(f"{path}: no such study")
            # Browsing, analysis and export work on a study this user may not write (a
            # read-only medium or folder); writing actions then say it is read-only.
            study = open_study(path, allow_read_only=True)
        except Exception as exc:  # a bad file must not take the window down
            show_exception(self.window, "Cannot open the study", exc)
            return False
        self.context.set_study(study)
        self._remember(path)
        return True

    def create_path(self, path: str | Path) -> bool:
        from meaningbench.queries.files import create_study

        path = Path(path)
        if path.suffix != STUDY_SUFFIX:
            path = path.with_name(path.name + STUDY_SUFFIX)
        try:
            study = create_study(path)
        except Exception as exc:
            show_exception(self.window, "Cannot create the study", exc)
            return False
        self.context.set_study(study)
        self._remember(path)
        return True

    def close_study(self) -> None:
        self.context.set_study(None)

    def open_demo(self) -> bool:
        available, reason = demo_available()
        if not available:
            show_exception(self.window, "Demo study", RuntimeError(reason))
            return False
        path = studies_dir() / DEMO_FILE
        if not path.exists():
            try:
                self.context.runner.run_now(build_demo_job(path))
            except Exception as exc:
                show_exception(self.window, "Cannot build the demo study", exc)
                return False
        return self.open_path(path)

    def open_most_recent(self) -> bool:
        for entry in self.prefs.recent_studies:
            if Path(entry).exists():
                return self.open_path(entry)
        return False

    def _remember(self, path: Path) -> None:
        self.prefs.add_recent(path)
        self.prefs.save()
        self.recent_changed.emit(list(self.prefs.recent_studies))

    def forget(self, path: str | Path) -> None:
        """Drop one study from the recent list (a file the app itself removed)."""
        self.prefs.recent_studies = [p for p in self.prefs.recent_studies if Path(p) != Path(path)]
        self.prefs.save()
        self.recent_changed.emit(list(self.prefs.recent_studies))

    def forget_missing(self) -> None:
        self.prefs.recent_studies = [p for p in self.prefs.recent_studies if Path(p).exists()]
        self.prefs.save()
        self.recent_changed.emit(list(self.prefs.recent_studies))

    # -- with file dialogs ------------------------------------------------------------

    def _start_dir(self) -> str:
        current = self.context.path
        return str(current.parent if current else studies_dir())

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open a study or a rater kit", self._start_dir(), OPEN_FILTER
        )
        if path:
            self.open_path(path)

    def new_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.window,
            "New study",
            str(Path(self._start_dir()) / f"untitled{STUDY_SUFFIX}"),
            STUDY_FILTER,
        )
        if path:
            self.create_path(path)
