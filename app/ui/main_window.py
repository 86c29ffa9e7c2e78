"""The main window: navigation between pages, menus, status bar, saved window state.

Pages are registered by key (`register_page`), each with a factory that imports its
screen when the page is first shown, so the window appears before the pages' modules load;
registering an existing key replaces that page.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStackedWidget,
    QWidget,
)

from meaningbench.queries.files import demo_available
from meaningbench.runtime.changes import StudyChanges
from meaningbench.settings import APP_NAME, UserPrefs
from meaningbench.ui.context import StudyContext
from meaningbench.ui.icons import app_icon, themed_icon
from meaningbench.ui.menus import build_actions, refresh_icons
from meaningbench.ui.pages import PageFactory, PageSpec
from meaningbench.ui.rater_mode import RaterMode
from meaningbench.ui.status_bar import MainStatusBar
from meaningbench.ui.study_controller import StudyController
from meaningbench.ui.theme import SCALE_STEP, ThemeManager
from meaningbench.ui.welcome import WelcomePage
from meaningbench.ui.window_state import DEFAULT_SIZE, default_geometry, window_settings

COUNTS_DELAY_MS = 400
CLOSE_WAIT_MS = 5000


@dataclass
class _PageSlot:
    spec: PageSpec
    nav_item: QListWidgetItem
    action: QAction
    widget: QWidget | None = None


def _default_pages() -> list[PageSpec]:
    def browser(ctx: StudyContext) -> QWidget:
        from meaningbench.ui.browser.page import BrowserPage

        return BrowserPage(ctx)

    def annotate(ctx: StudyContext) -> QWidget:
        from meaningbench.ui.annotation.page import AnnotatePage

        return AnnotatePage(ctx)

    def dashboard(ctx: StudyContext) -> QWidget:
        from meaningbench.ui.dashboard import DashboardPage, open_in_compare

        page = DashboardPage(ctx)
        page.item_activated.connect(lambda item_id: open_in_compare(ctx.parent(), item_id))
        return page

    def compare(ctx: StudyContext) -> QWidget:
        from meaningbench.ui.compare import ComparePage

        return ComparePage(ctx)

    def sweep(ctx: StudyContext) -> QWidget:
        from meaningbench.ui.sweep import SweepPage

        return SweepPage(ctx)

    def campaign(ctx: StudyContext) -> QWidget:
        from meaningbench.ui.campaign import CampaignPage

        return CampaignPage(ctx)

    return [
        PageSpec("browser", "Browser", browser, icon="browser"),
        PageSpec("annotate", "Annotate", annotate, icon="annotate"),
        PageSpec("dashboard", "Dashboard", dashboard, icon="dashboard"),
        PageSpec("compare", "Compare", compare, icon="compare"),
        PageSpec("sweep", "Sweep", sweep, icon="run"),
        PageSpec("campaign", "Campaign", campaign, icon="campaign"),
    ]


class MainWindow(QMainWindow):
    def __init__(self, theme: ThemeManager | None = None, prefs: UserPrefs | None = None) -> None:
        super().__init__()
        app = QApplication.instance()
        assert isinstance(app, QApplication), "create the QApplication first"
        self.prefs = prefs or UserPrefs.load()
        self.theme = theme or ThemeManager(app)
        self.setObjectName("mainWindow")
        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(app_icon())
        self.context = StudyContext(parent=self)
        self.runner = self.context.runner
        self.runner.dialog_parent = self
        self.studies = StudyController(self.context, self.prefs, self)
        self._slots: dict[str, _PageSlot] = {}
        self._dialogs: dict[str, QWidget] = {}
        self._page_states: dict[str, dict[str, Any]] = {}
        self._build()
        self.actions_ = build_actions(self)
        self.rater_mode = RaterMode(self)
        self.actions_.theme.get(self.theme.choice, self.actions_.theme["system"]).setChecked(True)
        for spec in _default_pages():
            self.register_page(spec.key, spec.title, spec.factory, icon=spec.icon)
        self._counts_timer = QTimer(self)
        self._counts_timer.setSingleShot(True)
        self._counts_timer.setInterval(COUNTS_DELAY_MS)
        self._counts_timer.timeout.connect(self.refresh_counts)
        self.context.study_opened.connect(self._on_study_opened)
        self.context.study_closed.connect(self._on_study_closed)
        self.context.study_changed.connect(self._on_study_changed)
        self.context.import_requested.connect(self.show_import_dialog)
        self.runner.job_finished.connect(lambda *_: self._counts_timer.start())
        self.studies.recent_changed.connect(self._fill_recent)
        self._fill_recent(self.prefs.recent_studies)
        available, reason = demo_available()
        self.welcome.set_demo_available(available, reason)
        self.actions_.demo.setEnabled(available)
        self._update_enabled()
        self.restore_window_state()

    # -- layout -----------------------------------------------------------------------

    def _build(self) -> None:
        self.nav = QListWidget()
        self.nav.setObjectName("navigation")
        self.nav.setIconSize(QSize(20, 20))
        self.nav.setFixedWidth(136)
        self.nav.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.nav.currentRowChanged.connect(self._on_nav_row)
        self.stack = QStackedWidget()
        self.stack.setObjectName("pageStack")
        self.welcome = WelcomePage()
        self.welcome.open_requested.connect(lambda: self.studies.open_dialog())
        self.welcome.new_requested.connect(lambda: self.studies.new_dialog())
        self.welcome.demo_requested.connect(lambda: self.studies.open_demo())
        self.welcome.recent_requested.connect(lambda p: self.studies.open_path(p))
        self.welcome.import_requested.connect(self._import_from_welcome)
        self.welcome.guide_requested.connect(self.show_guides)
        self.stack.addWidget(self.welcome)
        central = QWidget()
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.nav)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.status = MainStatusBar(self.runner, self)
        self.setStatusBar(self.status)
        self.status.clear_study()
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is not None:
            self.setGeometry(default_geometry(screen.availableGeometry()))
        else:
            self.resize(DEFAULT_SIZE)

    def toolbar_style(self) -> Qt.ToolButtonStyle:
        return Qt.ToolButtonStyle.ToolButtonTextBesideIcon

    # -- pages ------------------------------------------------------------------------

    def register_page(
        self,
        key: str,
        title: str,
        factory: PageFactory,
        *,
        icon: str | None = None,
        needs_study: bool = True,
    ) -> None:
        """Add a page to the navigation, or replace the page registered under `key`."""
        spec = PageSpec(key, title, factory, icon=icon, needs_study=needs_study)
        old = self._slots.get(key)
        if old is not None:
            if old.widget is not None:
                self._shutdown_page(old)
                self.stack.removeWidget(old.widget)
                old.widget.deleteLater()
            old.spec, old.widget = spec, None
            old.nav_item.setText(title)
            old.action.setText(title)
            if icon:
                old.nav_item.setIcon(themed_icon(icon))
            if self.current_page() == key:
                self.show_page(key)
            return
        item = QListWidgetItem(themed_icon(icon) if icon else themed_icon("browser"), title)
        item.setData(Qt.ItemDataRole.UserRole, key)
        item.setSizeHint(QSize(0, 40))
        self.nav.addItem(item)
        action = QAction(title, self)
        number = len(self._slots) + 1
        if number <= 9:
            action.setShortcut(QKeySequence(f"Ctrl+{number}"))
        action.triggered.connect(lambda _c=False, k=key: self.show_page(k))
        self.addAction(action)
        if self.actions_ is not None and self.actions_.pages_menu is not None:
            self.actions_.pages_menu.addAction(action)
        self._slots[key] = _PageSlot(spec, item, action)
        self._update_enabled()

    actions_: Any = None  # set in __init__ once the actions exist

    def page_keys(self) -> list[str]:
        return list(self._slots)

    def slots(self) -> dict[str, _PageSlot]:
        """The registered pages by key: their navigation entry, action and widget."""
        return dict(self._slots)

    def existing_page(self, key: str) -> QWidget | None:
        """The page's widget if it was created (never creates it)."""
        slot = self._slots.get(key)
        return slot.widget if slot is not None else None

    def page(self, key: str) -> QWidget | None:
        """The page's widget, created on first use (None without a study, for study pages)."""
        slot = self._slots[key]
        if slot.widget is None:
            if slot.spec.needs_study and self.context.study is None:
                return None
            slot.widget = slot.spec.factory(self.context)
            self.stack.addWidget(slot.widget)
            restore = getattr(slot.widget, "restore_state", None)
            if callable(restore) and key in self._page_states:
                restore(self._page_states[key])
        return slot.widget

    def show_page(self, key: str) -> bool:
        widget = self.page(key)
        if widget is None:
            return False
        self.stack.setCurrentWidget(widget)
        row = list(self._slots).index(key)
        if self.nav.currentRow() != row:
            self.nav.blockSignals(True)
            self.nav.setCurrentRow(row)
            self.nav.blockSignals(False)
        shown = getattr(widget, "page_shown", None)
        if callable(shown):
            shown()
        return True

    def current_page(self) -> str | None:
        widget = self.stack.currentWidget()
        for key, slot in self._slots.items():
            if slot.widget is widget and widget is not None:
                return key
        return None

    def _on_nav_row(self, row: int) -> None:
        if 0 <= row < len(self._slots):
            self.show_page(list(self._slots)[row])

    def _shutdown_page(self, slot: _PageSlot) -> None:
        widget = slot.widget
        if widget is None:
            return
        save = getattr(widget, "save_state", None)
        if callable(save):
            self._page_states[slot.spec.key] = save()
        stop = getattr(widget, "shutdown", None)
        if callable(stop):
            stop()

    # -- study events -----------------------------------------------------------------

    def _on_study_changed(self, changes: StudyChanges) -> None:
        if changes.settings:
            self._show_study_name()
        if changes.ratings or changes.items or changes.everything:
            self._counts_timer.start()

    def _show_study_name(self) -> None:
        study = self.context.study
        if study is None:
            return
        name = self.context.title
        if getattr(study, "read_only", False):
            name = f"{name} (read-only)"
        self.setWindowTitle(f"{name} — {APP_NAME}")
        self.status.set_study(name, str(study.path))

    def _on_study_opened(self, study: Any) -> None:
        self._show_study_name()
        self._update_enabled()
        self.refresh_counts()
        if self.rater_mode.enter_if_kit(study):
            return  # a rater kit: straight to its rating screen
        last = str(window_settings().value("window/page", "browser"))
        if not self.show_page(last if last in self._slots else "browser"):
            self.show_page("browser")

    def _on_study_closed(self) -> None:
        self.rater_mode.leave()
        self.setWindowTitle(APP_NAME)
        self.status.clear_study()
        self.stack.setCurrentWidget(self.welcome)
        self.nav.blockSignals(True)
        self.nav.setCurrentRow(-1)
        self.nav.blockSignals(False)
        self._update_enabled()

    def refresh_counts(self) -> None:
        study = self.context.study
        # A kit's rater sees no study counts: items against their queue's length would
        # tell how many hidden control items it holds.
        if study is None or self.rater_mode.active:
            self.status.set_counts(None)
            return
        from meaningbench.queries.study import study_counts

        self.status.set_counts(study_counts(study))

    def update_enabled(self) -> None:
        self._update_enabled()

    def _update_enabled(self) -> None:
        has_study = self.context.study is not None
        for slot in self._slots.values():
            enabled = has_study or not slot.spec.needs_study
            flags = slot.nav_item.flags()
            slot.nav_item.setFlags(
                flags | Qt.ItemFlag.ItemIsEnabled if enabled else flags & ~Qt.ItemFlag.ItemIsEnabled
            )
            slot.action.setEnabled(enabled)
        if self.actions_ is not None:
            for action in self.actions_.needs_study:
                action.setEnabled(has_study)
        rater_mode: RaterMode | None = getattr(self, "rater_mode", None)
        if rater_mode is not None:
            rater_mode.restrict()

    def _fill_recent(self, paths: list[str]) -> None:
        self.welcome.set_recent(paths)
        menu = self.actions_.recent_menu if self.actions_ is not None else None
        if menu is None:
            return
        menu.clear()
        for p in paths:
            act = menu.addAction(Path(p).name)
            act.setToolTip(p)
            act.setEnabled(Path(p).exists())
            act.triggered.connect(lambda _c=False, path=p: self.studies.open_path(path))
        if paths:
            menu.addSeparator()
            menu.addAction("Forget missing studies", self.studies.forget_missing)
        menu.setEnabled(bool(paths))

    # -- appearance -------------------------------------------------------------------

    def set_theme(self, choice: str) -> None:
        self.theme.apply(choice=choice)
        self.prefs.theme = self.theme.choice
        self.prefs.save()
        self.actions_.theme[self.theme.choice].setChecked(True)
        refresh_icons(self.actions_)
        for slot in self._slots.values():
            if slot.spec.icon:
                slot.nav_item.setIcon(themed_icon(slot.spec.icon))

    def change_text_size(self, direction: int) -> None:
        """+1 larger, -1 smaller, 0 back to the platform's size."""
        scale = 1.0 if direction == 0 else self.theme.scale + direction * SCALE_STEP
        self.theme.apply(scale=scale)
        self.prefs.text_scale = self.theme.scale
        self.prefs.save()
        self.status.showMessage(f"Text size {round(self.theme.scale * 100)} %", 2000)

    # -- dialogs ----------------------------------------------------------------------

    def _dialog(self, key: str, make: Any) -> Any:
        dialog = self._dialogs.get(key)
        if dialog is None:
            dialog = make()
            self._dialogs[key] = dialog
            dialog.destroyed.connect(lambda *_: self._dialogs.pop(key, None))
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def show_import_dialog(self) -> Any:
        from meaningbench.ui.dialogs.import_file import ImportDialog

        return self._dialog("import", lambda: ImportDialog(self.context, self))

    def _import_from_welcome(self) -> None:
        from meaningbench.ui.welcome.importing import ask_and_import

        ask_and_import(self)

    def show_export_dialog(self) -> Any:
        from meaningbench.ui.dialogs.export import ExportDialog

        return self._dialog("export", lambda: ExportDialog(self.context, self))

    def show_make_kits_dialog(self) -> Any:
        from meaningbench.ui.dialogs.kits import MakeKitsDialog

        return self._dialog("make_kits", lambda: MakeKitsDialog(self.context, self))

    def show_collect_kits_dialog(self) -> Any:
        from meaningbench.ui.dialogs.kits import CollectKitsDialog

        return self._dialog("collect_kits", lambda: CollectKitsDialog(self.context, self))

    def show_battery_dialog(self) -> Any:
        from meaningbench.ui.dialogs.battery import BatteryDialog

        return self._dialog("battery", lambda: BatteryDialog(self.context, self))

    def show_settings_dialog(self) -> Any:
        from meaningbench.ui.dialogs.study_settings import StudySettingsDialog

        return self._dialog("settings", lambda: StudySettingsDialog(self.context, self))

    def show_keymap(self) -> Any:
        from meaningbench.ui.dialogs.help import KeymapDialog

        return self._dialog("keymap", lambda: KeymapDialog(self.actions_, self))

    def show_guides(self) -> Any:
        from meaningbench.ui.dialogs.guides import GuidesDialog

        return self._dialog("guides", lambda: GuidesDialog(self))

    def show_about(self) -> Any:
        from meaningbench.ui.dialogs.help import show_about

        return show_about(self)

    def start_annotation(self) -> None:
        study = self.context.study
        if study is not None and getattr(study, "read_only", False):
            from meaningbench.ui.dialogs.errors import show_error

            show_error(
                self,
                "Cannot rate",
                f"{study.path.name} is read-only ({study.read_only_reason}): ratings could not "
                "be saved. Copy the study to a writable folder and open the copy to rate.",
            )
            return
        if self.show_page("annotate"):
            page = self.page("annotate")
            start = getattr(page, "start", None)
            if callable(start):
                start()

    # -- window state -----------------------------------------------------------------

    def restore_window_state(self) -> None:
        s = window_settings()
        geometry = s.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        state = s.value("window/state")
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restoreState(state)
        for key in self._slots:
            value = s.value(f"pages/{key}")
            if isinstance(value, dict):
                self._page_states[key] = value

    def save_window_state(self) -> None:
        s = window_settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        page = self.current_page()
        # A kit's rating page says nothing of where the lead's next study should open.
        if page is not None and not self.rater_mode.active:
            s.setValue("window/page", page)
        for slot in self._slots.values():
            save = getattr(slot.widget, "save_state", None)
            if callable(save):
                self._page_states[slot.spec.key] = save()
        for key, value in self._page_states.items():
            s.setValue(f"pages/{key}", value)
        s.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        self.save_window_state()
        self.runner.cancel_all()
        if not self.runner.wait(CLOSE_WAIT_MS):
            # A job still busy (a model loading cannot stop mid-way): end its process;
            # what it committed stays, and running it again resumes.
            from meaningbench.ops.child_process import terminate_all

            self.runner.show_error_dialogs = False
            terminate_all()
            self.runner.wait(CLOSE_WAIT_MS)
        for slot in self._slots.values():
            self._shutdown_page(slot)
        for dialog in list(self._dialogs.values()):
            dialog.close()
        self.context.set_study(None)
        super().closeEvent(event)
