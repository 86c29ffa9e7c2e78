"""Choose or create the annotator profile to rate as (several raters share one study file)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)
from sqlalchemy import select

from app.annotation.overview import annotator_overview
from db.models import Annotator
from db.study import Study

NAME_ROLE = Qt.ItemDataRole.UserRole


class AnnotatorPicker(QDialog):
    """Lists the study's annotators with their progress; a new name creates a profile.

    The profile itself is created when its rating session starts (with its queue), so a
    picker closed with Cancel leaves the study untouched.
    """

    def __init__(self, study: Study, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Who is rating?")
        self.setObjectName("annotatorPicker")
        self.resize(440, 420)
        with study.session() as s:
            self._summaries = annotator_overview(s)
            self._taken = set(s.scalars(select(Annotator.name).where(Annotator.kind != "named")))
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Continue as:" if self._summaries else "No annotators yet."))
        self.list = QListWidget()
        for summary in self._summaries:
            progress = (
                f"{summary.rated} of {summary.total} rated" if summary.total else "not started"
            )
            item = QListWidgetItem(f"{summary.name}    ·    {progress}")
            item.setData(NAME_ROLE, summary.name)
            self.list.addItem(item)
        self.list.setVisible(bool(self._summaries))
        layout.addWidget(self.list, 1)
        layout.addWidget(QLabel("Or start a new profile:"))
        self.new_name = QLineEdit()
        self.new_name.setPlaceholderText("Your name or initials")
        layout.addWidget(self.new_name)
        self.error = QLabel()
        self.error.setStyleSheet("color: #c0392b;")
        self.error.hide()
        layout.addWidget(self.error)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Start rating")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.list.currentItemChanged.connect(lambda *_: self.new_name.clear())
        self.new_name.textEdited.connect(lambda _t: self.list.clearSelection())
        if self._summaries:
            self.list.setCurrentRow(0)
        else:
            self.new_name.setFocus()

    def selected_name(self) -> str | None:
        typed = self.new_name.text().strip()
        if typed:
            return typed
        item = self.list.currentItem()
        if item is not None and item.isSelected():
            return str(item.data(NAME_ROLE))
        return None

    def accept(self) -> None:
        name = self.selected_name()
        if not name:
            self._fail("Choose a profile or type a name.")
            return
        if name in self._taken:
            self._fail(f"{name!r} holds imported labels; choose another name.")
            return
        super().accept()

    def _fail(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    @classmethod
    def choose(cls, study: Study, parent: QWidget | None = None) -> str | None:
        """Run the picker modally; the chosen name, or None when cancelled."""
        dialog = cls(study, parent)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            return dialog.selected_name()
        return None
