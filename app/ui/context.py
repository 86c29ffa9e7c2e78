"""The open study as the screens see it, and the change notifications they refresh from.

Screens never talk to each other: they read the study through their own connections and
listen here. Workers report changes (a batch of scores landed) through these signals,
which are always delivered on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from meaningbench.ui.workers import JobRunner

if TYPE_CHECKING:
    from meaningbench.queries.files import StudyHandle


class StudyContext(QObject):
    study_opened = Signal(object)  # meaningbench.queries.files.StudyHandle
    study_closed = Signal()
    # (run label, item ids): a batch of scores was committed by a worker.
    scores_changed = Signal(str, list)
    # item ids whose ratings changed (annotation screen, imports).
    ratings_changed = Signal(list)
    # Anything else changed wholesale (an import added items, settings changed).
    data_changed = Signal()
    settings_changed = Signal()
    # A page with nothing to show asks for the import dialog (the window owns it).
    import_requested = Signal()

    # Carries on_batch calls from worker threads to the GUI thread (queued by Qt).
    _batch_from_worker = Signal(str, list)

    def __init__(self, runner: JobRunner | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.study: StudyHandle | None = None
        self.runner = runner or JobRunner(self)
        self._batch_from_worker.connect(self._relay_batch)

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

    def notify_batch(self, label: str, item_ids: Iterable[int]) -> None:
        """Thread-safe: workers call this (through `on_batch`) after each committed batch."""
        self._batch_from_worker.emit(label, [int(i) for i in item_ids])

    @Slot(str, list)
    def _relay_batch(self, label: str, item_ids: list[int]) -> None:
        self.scores_changed.emit(label, item_ids)
