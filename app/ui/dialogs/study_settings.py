"""Study settings: the study's name, and the annotation protocol — scales (dimensions),
queues and quality control, guidelines — from the annotation package's settings widget.

Each protocol section is its own instance of `AnnotationSettingsWidget` showing one
section: it writes only that section and re-reads the rest from the file, so the tabs
never overwrite each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.settings import save_study_settings
from meaningbench.queries.study import NAME_KEY, get_setting, study_counts
from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget
from meaningbench.ui.dialogs.errors import show_exception
from meaningbench.ui.widgets import scrolling
from meaningbench.ui.window_state import open_at
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.ui.context import StudyContext

SECTIONS = (("scales", "Scales"), ("queues", "Queues and QC"), ("guidelines", "Guidelines"))


class StudySettingsDialog(QDialog):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("studySettingsDialog")
        self.setWindowTitle("Study settings")
        self.context = context
        self.sections: dict[str, Any] = {}
        self.tabs = QTabWidget()
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("studyName")
        self.name_edit.setPlaceholderText("shown in the title bar and the status bar")
        self.path_label = QLabel()
        self.contents_label = QLabel()
        for label in (self.path_label, self.contents_label):
            label.setObjectName("mutedLabel")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setWordWrap(True)
        study_tab = QWidget()
        form = QFormLayout(study_tab)
        form.addRow("Name", self.name_edit)
        form.addRow("File", self.path_label)
        form.addRow("Contents", self.contents_label)
        self.tabs.addTab(scrolling(study_tab), "Study")
        self._add_protocol_tabs()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.Apply
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.save)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(buttons)
        open_at(self, QSize(900, 600))
        self.load()

    def _add_protocol_tabs(self) -> None:
        study = self.context.study
        if study is None:
            return
        for key, title in SECTIONS:
            try:
                widget = AnnotationSettingsWidget(
                    study, self, sections=(key,), runner=self.context.runner
                )
            except Exception as exc:  # one broken section must not cost the others
                show_exception(self, f"{title} settings", exc)
                continue
            self.sections[key] = widget
            # A scale table or a guideline can be taller than a laptop's screen: each tab
            # scrolls, and OK / Cancel / Apply stay on screen.
            self.tabs.addTab(scrolling(widget), title)

    def tab_of(self, section: QWidget) -> int:
        """The tab index of a section (each sits in its tab's scroll area)."""
        tabs = [self.tabs.widget(i) for i in range(self.tabs.count())]
        return next(
            i for i, tab in enumerate(tabs) if tab is not None and tab.isAncestorOf(section)
        )

    def load(self) -> None:
        study = self.context.study
        if study is None:
            return
        self.name_edit.setText(str(get_setting(study, NAME_KEY, "") or ""))
        self.name_edit.setPlaceholderText(study.path.stem)
        self.path_label.setText(str(study.path))
        counts = study_counts(study)
        self.contents_label.setText(
            f"{counts.summary()} · {counted(counts.datasets, 'dataset')} · "
            f"{counted(counts.annotators, 'annotator')}"
        )

    def save(self) -> bool:
        """Store every tab; a refused section (a scale that has ratings) says why and stays.

        One write for the whole dialog, so the screens hear of it once.
        """
        study = self.context.study
        if study is None:
            return False
        widgets = list(self.sections.values())
        name = self.name_edit.text().strip() or None
        try:
            sections = [(w.settings(), w.fields()) for w in widgets]
            refused = self.context.runner.run_now(
                save_study_settings(study, NAME_KEY, name, sections)
            )
        except Exception as exc:
            show_exception(self, "Cannot save the settings", exc)
            return False
        ok = True
        for widget, refusal in zip(widgets, refused, strict=True):
            if not widget.show_refusal(refusal):
                if ok:
                    self.tabs.setCurrentIndex(self.tab_of(widget))
                ok = False
        return ok

    def accept(self) -> None:
        if self.save():
            super().accept()
