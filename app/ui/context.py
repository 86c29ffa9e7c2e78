"""The open study as the screens see it, and the change notifications they refresh from.

Screens never talk to each other: they read the study through their own connections and
listen here. What any write changed arrives once, as one `StudyChanges` on
`study_changed` (the job runner's broadcast, on the GUI thread); each screen decides
from it what to refresh.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from meaningbench.ui.workers import JobRunner

if TYPE_CHECKING:
    from meaningbench.queries.files import StudyHandle


class StudyContext(QObject):
    study_opened = Signal(object)  # meaningbench.queries.files.StudyHandle
    study_closed = Signal()
    # meaningbench.runtime.changes.StudyChanges: what one write changed, sent once.
    study_changed = Signal(object)
    # A page with nothing to show asks for the import dialog (the window owns it).
    import_requested = Signal()

    def __init__(self, runner: JobRunner | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.study: StudyHandle | None = None
        self.runner = runner or JobRunner(self)
        self.runner.study_changed.connect(self.study_changed)

    @property
    def path(self) -> Path | None:
        return self.study.path if self.study is not None else None

    @property
    def title(self) -> str:
        """The study's display name: its `name` setting, else the file name."""
        if self.study is None:
            return ""
        from meaningbench.queries.study import study_name

        return study_name(self.study)

    def set_study(self, study: StudyHandle | None) -> None:
        old, self.study = self.study, None
        if old is not None:
            self.study_closed.emit()
            old.close()
        if study is not None:
            self.study = study
            self.study_opened.emit(study)
