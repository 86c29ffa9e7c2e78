"""Send back: the rater's copy of a kit, with every rating in it, goes into a folder of
their choice (`meaningbench.ops.kits.send_back_job`), and the dialog says where the file
went and what the study lead does with it. Rater mode (`meaningbench.ui.rater_mode`) opens it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
)

from meaningbench.errors import UserError
from meaningbench.ui.widgets import grow_to_fit, say_in
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.ops.kits import SentBack
    from meaningbench.queries.files import StudyHandle
    from meaningbench.ui.main_window import MainWindow


class SendBackDialog(QDialog):
    """Where the returned kit goes (a folder), the copy made, and where it went."""

    def __init__(self, window: MainWindow, study: StudyHandle, rater: str) -> None:
        super().__init__(window)
        from meaningbench.ops.kits import default_send_back_folder

        self.setObjectName("sendBackDialog")
        self.setWindowTitle("Send back your ratings")
        self.window_ = window
        self.study = study
        self.rater = rater
        self.sent: SentBack | None = None
        self.intro = QLabel()
        self.intro.setObjectName("sendBackIntro")
        self.intro.setWordWrap(True)
        self.folder_edit = QLineEdit(str(default_send_back_folder(study)))
        self.folder_edit.setObjectName("sendBackFolder")
        choose = QPushButton("Choose…")
        choose.setAutoDefault(False)
        choose.clicked.connect(self.choose_folder)
        row = QHBoxLayout()
        row.addWidget(QLabel("Folder:"))
        row.addWidget(self.folder_edit, 1)
        row.addWidget(choose)
        self.result_label = QLabel()
        self.result_label.setObjectName("sendBackResult")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        # Close must never become the default button by having had the focus: Enter in a
        # dialog opened again would close it without sending.
        self.buttons.button(QDialogButtonBox.StandardButton.Close).setAutoDefault(False)
        self.send_button = self.buttons.addButton(
            "Send back", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.send_button.setObjectName("sendBackButton")
        self.send_button.setDefault(True)
        self.send_button.clicked.connect(self.send)
        self.buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(row)
        layout.addWidget(self.result_label)
        layout.addWidget(self.buttons)
        self.resize(620, self.sizeHint().height())

    def prepare(self, rated: int) -> None:
        self.result_label.hide()
        self.send_button.setDefault(True)  # Enter sends, however the dialog was left
        self.folder_edit.setFocus(Qt.FocusReason.OtherFocusReason)
        held = counted(rated, "rating") if rated else "practice answers"
        self.intro.setText(
            f"A copy of this kit, {self.study.path.name}, with your {held} goes into the "
            "folder below. You can send back more than once: "
            "each copy holds every rating so far, and your study lead counts each rating once."
        )
        grow_to_fit(self)

    def choose_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(
            self, "Send back into which folder?", self.folder_edit.text()
        )
        if chosen:
            self.folder_edit.setText(chosen)

    def send(self) -> SentBack | None:
        from meaningbench.ops.kits import send_back_job

        text = self.folder_edit.text().strip()
        if not text:
            self._say("Choose a folder to put the returned kit in.", error=True)
            return None
        try:
            sent: SentBack = self.window_.runner.run_now(
                send_back_job(self.study, Path(text).expanduser())
            )
        except (UserError, OSError) as exc:
            self._say(f"Not sent back: {exc}", error=True)
            return None
        self.sent = sent
        self._say(
            f"Sent back ✓ {counted(sent.ratings, 'rating')} by "
            f"{sent.rater} are in\n{sent.path}\n\nGive this file to your study lead (by "
            "e-mail, on a USB stick or in a shared folder). They put it in one folder with "
            "the other returned kits and choose File ▸ Collect rater kits…",
            error=False,
        )
        self.window_.statusBar().showMessage(f"Sent back to {sent.path}", 10000)
        return sent

    def _say(self, text: str, *, error: bool) -> None:
        say_in(self.result_label, text, error=error)
