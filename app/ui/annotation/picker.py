"""Choose or create the annotator profile to rate as (several raters share one study file)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
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

from meaningbench.queries.annotation import annotator_choices
from meaningbench.queries.files import StudyHandle

NAME_ROLE = Qt.ItemDataRole.UserRole


class AnnotatorPicker(QDialog):
    """Lists the study's annotators with their progress; a new name creates a profile.

    The profile itself is created when its rating session starts (with its queue), so a
    picker closed with Cancel leaves the study untouched.

    Rater identity is never guessed: no profile is preselected, letters typed anywhere go
    into the name field (never into the list's type-ahead search), and a name the study does
    not know yet needs a second, explicit confirmation before a new rater is made.
    """

    def __init__(self, study: StudyHandle, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Who is rating?")
        self.setObjectName("annotatorPicker")
        self.resize(440, 420)
        choices = annotator_choices(study)
        self._summaries = choices.raters
        self._taken = set(choices.taken)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Continue as:" if self._summaries else "No annotators yet."))
        self.list = QListWidget()
        for summary in self._summaries:
            item = QListWidgetItem(f"{summary.name}    ·    {summary.progress_text()}")
            item.setData(NAME_ROLE, summary.name)
            self.list.addItem(item)
        self.list.setVisible(bool(self._summaries))
        layout.addWidget(self.list, 1)
        layout.addWidget(QLabel("Or start a new profile:"))
        self.new_name = QLineEdit()
        self.new_name.setPlaceholderText("Your name or initials")
        layout.addWidget(self.new_name)
        self.error = QLabel()
        self.error.setObjectName("pickerError")
        self.error.setWordWrap(True)
        self.error.setProperty("role", "error")  # coloured per theme by the style sheet
        self.error.hide()
        layout.addWidget(self.error)
        self.confirm = QLabel()
        self.confirm.setObjectName("pickerConfirm")
        self.confirm.setWordWrap(True)
        self.confirm.hide()
        layout.addWidget(self.confirm)
        self._confirmed_new: str | None = None  # the new name the user has been asked about
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Start rating")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.list.itemClicked.connect(lambda _item: self.new_name.clear())
        self.list.currentItemChanged.connect(self._on_list_choice)
        self.new_name.textEdited.connect(self._on_typed)
        # Type-ahead in the list would jump to (and Enter would start) an existing rater
        # while the user believes they are typing a new name.
        self.list.installEventFilter(self)
        # ↓ from the name field walks into the list: an existing rater is a key away.
        self.new_name.installEventFilter(self)
        self.list.setCurrentRow(-1)
        self.list.clearSelection()
        self.new_name.setFocus()

    def known_names(self) -> list[str]:
        return [summary.name for summary in self._summaries]

    def selected_name(self) -> str | None:
        typed = self.new_name.text().strip()
        if typed:
            return typed
        item = self.list.currentItem()
        if item is not None and item.isSelected():
            return str(item.data(NAME_ROLE))
        return None

    def is_new(self) -> bool:
        """Whether accepting makes a new rater (the chosen name is not yet in the study)."""
        name = self.selected_name()
        return bool(name) and name not in self.known_names()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.new_name
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Down
            and self.list.count()
        ):
            self.list.setFocus(Qt.FocusReason.TabFocusReason)
            row = max(0, self.list.currentRow())
            self.list.setCurrentRow(row)
            self.list.item(row).setSelected(True)
            return True
        if watched is self.list and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            text = event.text()
            if text and text.isprintable() and not text.isspace():
                self.list.clearSelection()
                self.new_name.setFocus()
                self.new_name.insert(text)
                self._on_typed(self.new_name.text())
                return True
        return super().eventFilter(watched, event)

    def _on_list_choice(self, current: QListWidgetItem | None, *_: object) -> None:
        if current is not None and self.list.hasFocus():
            self.new_name.clear()
        self._reset_confirmation()

    def _on_typed(self, _text: str) -> None:
        self.list.clearSelection()
        self._reset_confirmation()

    def _reset_confirmation(self) -> None:
        self._confirmed_new = None
        self.confirm.hide()
        self.error.hide()
        self.ok_button.setText("Start rating")

    def accept(self) -> None:
        name = self.selected_name()
        if not name:
            self._fail("Choose a profile in the list or type a name.")
            return
        if name in self._taken:
            self._fail(f"{name!r} holds imported labels; choose another name.")
            return
        if self.is_new() and self._confirmed_new != name:
            # A new rater is a new identity in the study: say so and ask once more.
            self._confirmed_new = name
            self.error.hide()
            self.confirm.setText(
                f"<b>{_escape(name)}</b> is not a rater in this study yet. "
                "Press Enter again (or click “Create new rater”) to create this rater "
                "and start rating; edit the name or choose from the list otherwise."
            )
            self.confirm.show()
            self.ok_button.setText("Create new rater")
            return
        super().accept()

    def _fail(self, message: str) -> None:
        self.confirm.hide()
        self.error.setText(message)
        self.error.show()

    @classmethod
    def choose(cls, study: StudyHandle, parent: QWidget | None = None) -> str | None:
        """Run the picker modally; the chosen name, or None when cancelled."""
        dialog = cls(study, parent)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            return dialog.selected_name()
        return None


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
