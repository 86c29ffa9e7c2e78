"""Rater mode: a rater kit opened in the window is rated, and sent back, and nothing else.

A kit (`meaningbench.kits`) is a study file that carries a kit marker naming its rater.
Opened, it goes straight to the rating screen as that rater (practice first, when the kit
has practice). The pages and menus of the study lead (browser, dashboard, compare, sweep,
campaign, training, metrics, settings, import and export, kits) are hidden, their
shortcuts with them; the navigation shows the rating page alone. File ▸ Send back, and the
end screen's Send back after the last item, open the send-back dialog
(`meaningbench.ui.dialogs.send_back`) once something is rated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from meaningbench.ui.dialogs.send_back import SendBackDialog

if TYPE_CHECKING:
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
        self._connected_page: AnnotatePage | None = None

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
        if page is not self._connected_page:  # the end screen's Send back opens the dialog
            page.send_back_requested.connect(self.send_back)
            self._connected_page = page
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
        from meaningbench.queries.rater_kit import kit_practice, kit_ratings

        study = self.window.context.study
        if self.rater is None or study is None:
            return None
        rated = kit_ratings(study)
        # Practice alone goes back too: a rater the pass mark stopped shows the lead why.
        if rated == 0 and kit_practice(study) == 0:
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
