"""Rater mode: a rater kit opened in the window is rated, and sent back, and nothing else.

A kit (`meaningbench.kits`) is a study file that carries a kit marker naming its rater.
Opened, it goes straight to the rating screen as that rater (practice first, when the kit
has practice). The pages and menus of the study lead (browser, dashboard, compare, sweep,
campaign, training, metrics, settings, import and export, kits) are hidden, their
shortcuts with them; the navigation shows the rating page alone. Send back copies the kit, with every
rating in it, into a folder of the rater's choice (`meaningbench.ops.kits.send_back_job`)
and says where the file went and what the lead does with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
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
    from meaningbench.ui.annotation.page import AnnotatePage
    from meaningbench.ui.main_window import MainWindow

RATING_PAGE = "annotate"
NOTHING_RATED = (
    "Nothing to send back yet: rate at least one item first (practice answers are not ratings)."
)


class RaterMode(QObject):
    """Switches the window into rater mode for a kit, and back out when it closes."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.rater: str | None = None
        self.dialog: SendBackDialog | None = None

    @property
    def active(self) -> bool:
        return self.rater is not None

    def enter_if_kit(self, study: StudyHandle) -> bool:
        """Enter rater mode when `study` is a kit (True), else make sure it is left."""
        from meaningbench.queries.rater_kit import kit_marker

        marker = kit_marker(study)
        if marker is None:
            self.leave()
            return False
        self.rater = marker.rater
        self.restrict()
        w = self.window
        w.refresh_counts()
        w.setWindowTitle(f"{study.path.name} — rating as {marker.rater} — MeaningBench")
        page = self.rating_page()
        if page is None:
            return True
        page.set_rater(marker.rater)
        w.show_page(RATING_PAGE)
        if study.read_only:
            page.block(
                f"This kit cannot be rated where it is: {study.read_only_reason}. Save "
                f"{study.path.name} into a folder of your own (your Documents, say) and open "
                "it from there."
            )
        else:
            page.start()
        return True

    def leave(self) -> None:
        if self.rater is None:
            return
        self.rater = None
        page = self.rating_page(create=False)
        if page is not None:
            page.set_rater(None)
        for action in self._lead_actions():
            action.setVisible(True)
        self.window.actions_.send_back.setVisible(False)
        self.window.refresh_counts()
        for slot in self.window.slots().values():
            slot.nav_item.setHidden(False)
            slot.nav_item.setText(slot.spec.title)
            slot.action.setText(slot.spec.title)
        if self.dialog is not None:  # it belongs to the kit that closed
            self.dialog.close()
            self.dialog.deleteLater()
            self.dialog = None
        self.window.update_enabled()

    def restrict(self) -> None:
        """Hide and disable what a rater has no use for (called again whenever the window
        enables its actions)."""
        if self.rater is None:
            return
        for action in self._lead_actions():
            action.setVisible(False)
            action.setEnabled(False)
        send_back = self.window.actions_.send_back
        send_back.setVisible(True)
        send_back.setEnabled(True)
        for key, slot in self.window.slots().items():
            slot.nav_item.setHidden(key != RATING_PAGE)
            if key == RATING_PAGE:  # named as the rater sees it, in Help's list too
                slot.nav_item.setText("Rate")
                slot.action.setText("Rate")

    def _lead_actions(self) -> list[QAction]:
        a = self.window.actions_
        found = [
            a.new, a.demo, a.import_, a.export, a.merge, a.make_kits, a.collect_kits,
            a.settings, a.annotate, a.run_metrics,
        ]  # fmt: skip
        if a.train is not None:
            found.append(a.train)
        for menu in (a.study_menu, a.pages_menu):
            if menu is not None:
                found.append(menu.menuAction())
        found += [s.action for k, s in self.window.slots().items() if k != RATING_PAGE]
        return found

    def rating_page(self, *, create: bool = True) -> AnnotatePage | None:
        from meaningbench.ui.annotation.page import AnnotatePage

        page = self.window.page(RATING_PAGE) if create else self.window.existing_page(RATING_PAGE)
        return page if isinstance(page, AnnotatePage) else None

    # -- send back ------------------------------------------------------------------

    def send_back(self) -> SendBackDialog | None:
        """Open the Send back dialog; with nothing rated, say so on the rating screen."""
        from meaningbench.queries.rater_kit import kit_ratings

        study = self.window.context.study
        if self.rater is None or study is None:
            return None
        rated = kit_ratings(study)
        if rated == 0:
            page = self.rating_page()
            if page is not None:
                page.notice(NOTHING_RATED)
            self.window.statusBar().showMessage(NOTHING_RATED, 6000)
            return None
        if self.dialog is None:
            self.dialog = SendBackDialog(self.window, study, self.rater)
        self.dialog.prepare(rated)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        return self.dialog


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
        self.intro.setText(
            f"A copy of this kit, {self.study.path.name}, with your "
            f"{counted(rated, 'rating')} goes into the folder below. You can send back more than once: "
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
