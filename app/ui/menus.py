"""The main window's actions, menus and toolbar, in one place so the keymap lists them all."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QToolBar

from meaningbench.ui.icons import themed_icon
from meaningbench.ui.training import open_training_dialog

if TYPE_CHECKING:
    from meaningbench.ui.main_window import MainWindow


def _open_merge(window: MainWindow) -> None:
    from meaningbench.ui.dialogs.merge import open_merge_dialog  # loaded when first used

    open_merge_dialog(window)


@dataclass
class WindowActions:
    new: QAction
    open: QAction
    demo: QAction
    import_: QAction
    export: QAction
    merge: QAction
    make_kits: QAction
    collect_kits: QAction
    send_back: QAction
    close: QAction
    quit: QAction
    settings: QAction
    annotate: QAction
    run_metrics: QAction
    larger: QAction
    smaller: QAction
    reset_size: QAction
    keymap: QAction
    guide: QAction
    about: QAction
    train: QAction | None = None
    theme: dict[str, QAction] = field(default_factory=dict)
    recent_menu: QMenu | None = None
    study_menu: QMenu | None = None
    pages_menu: QMenu | None = None
    toolbar: QToolBar | None = None
    icons: dict[str, QAction] = field(default_factory=dict)

    @property
    def needs_study(self) -> list[QAction]:
        return [
            self.import_,
            self.export,
            self.merge,
            self.make_kits,
            self.collect_kits,
            self.close,
            self.settings,
            self.annotate,
            self.run_metrics,
        ]


def _action(
    window: MainWindow,
    text: str,
    slot: object,
    shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
) -> QAction:
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(slot)
    window.addAction(action)  # shortcuts work even when the menu bar is hidden
    return action


def build_actions(window: MainWindow) -> WindowActions:
    std = QKeySequence.StandardKey
    studies = window.studies
    a = WindowActions(
        new=_action(window, "&New study…", studies.new_dialog, std.New),
        open=_action(window, "&Open study…", studies.open_dialog, std.Open),
        demo=_action(window, "Open the &demo study", studies.open_demo),
        import_=_action(window, "&Import…", window.show_import_dialog, "Ctrl+I"),
        export=_action(window, "&Export…", window.show_export_dialog, "Ctrl+E"),
        merge=_action(window, "&Merge studies…", lambda: _open_merge(window)),
        make_kits=_action(window, "Make rater &kits…", window.show_make_kits_dialog),
        collect_kits=_action(window, "Co&llect rater kits…", window.show_collect_kits_dialog),
        send_back=_action(window, "Send &back…", lambda: window.rater_mode.send_back()),
        close=_action(window, "&Close study", studies.close_study, std.Close),
        quit=_action(window, "&Quit", window.close, std.Quit),
        settings=_action(window, "Study &settings…", window.show_settings_dialog, "Ctrl+,"),
        annotate=_action(window, "&Annotate…", window.start_annotation, "Ctrl+Shift+A"),
        run_metrics=_action(window, "&Run metrics…", window.show_battery_dialog, "Ctrl+R"),
        larger=_action(window, "&Larger text", lambda: window.change_text_size(+1), std.ZoomIn),
        smaller=_action(window, "&Smaller text", lambda: window.change_text_size(-1), std.ZoomOut),
        reset_size=_action(
            window, "&Reset text size", lambda: window.change_text_size(0), "Ctrl+0"
        ),
        keymap=_action(window, "&Keyboard shortcuts", window.show_keymap, "Ctrl+/"),
        guide=_action(window, "&User guide", window.show_guides, std.HelpContents),
        about=_action(window, "&About MeaningBench", window.show_about),
    )
    a.quit.setMenuRole(QAction.MenuRole.QuitRole)
    a.about.setMenuRole(QAction.MenuRole.AboutRole)
    a.settings.setMenuRole(QAction.MenuRole.NoRole)
    a.icons = {
        "open": a.open,
        "new": a.new,
        "import": a.import_,
        "export": a.export,
        "run": a.run_metrics,
        "annotate": a.annotate,
        "settings": a.settings,
        "demo": a.demo,
    }
    # Only a kit opened in rater mode has something to send back (see rater_mode).
    a.send_back.setVisible(False)
    a.send_back.setToolTip(
        "Save a copy of this kit, with your ratings, to return to the study lead"
    )

    _build_menus(window, a)
    a.toolbar = _build_toolbar(window, a)
    refresh_icons(a)
    return a


def _build_menus(window: MainWindow, a: WindowActions) -> None:
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([a.new, a.open])
    a.recent_menu = file_menu.addMenu("Open &recent")
    file_menu.addAction(a.demo)
    file_menu.addSeparator()
    file_menu.addActions([a.import_, a.export, a.merge])
    file_menu.addActions([a.make_kits, a.collect_kits, a.send_back])
    file_menu.addSeparator()
    file_menu.addActions([a.close, a.quit])

    study_menu = bar.addMenu("&Study")
    a.study_menu = study_menu
    study_menu.addActions([a.settings, a.annotate, a.run_metrics])
    a.train = _action(window, "&Train a model…", lambda: open_training_dialog(window))
    study_menu.addAction(a.train)

    view_menu = bar.addMenu("&View")
    a.pages_menu = view_menu.addMenu("&Go to")
    theme_menu = view_menu.addMenu("&Theme")
    group = QActionGroup(window)
    for key, label in (("system", "Follow the &system"), ("light", "&Light"), ("dark", "&Dark")):
        act = QAction(label, window, checkable=True)
        act.triggered.connect(lambda _c=False, k=key: window.set_theme(k))
        group.addAction(act)
        theme_menu.addAction(act)
        a.theme[key] = act
    view_menu.addSeparator()
    view_menu.addActions([a.larger, a.smaller, a.reset_size])

    help_menu = bar.addMenu("&Help")
    help_menu.addActions([a.guide, a.keymap, a.about])


def _build_toolbar(window: MainWindow, a: WindowActions) -> QToolBar:
    toolbar = QToolBar("Main toolbar", window)
    toolbar.setObjectName("mainToolbar")
    toolbar.setMovable(False)
    toolbar.setIconSize(QSize(20, 20))
    toolbar.setToolButtonStyle(window.toolbar_style())
    toolbar.addActions([a.open, a.import_])
    toolbar.addSeparator()
    toolbar.addActions([a.annotate, a.run_metrics, a.settings, a.send_back])
    window.addToolBar(toolbar)
    return toolbar


def refresh_icons(a: WindowActions) -> None:
    """Redraw the icons in the current theme's colour (after a theme switch)."""
    for name, action in a.icons.items():
        action.setIcon(themed_icon(name))
    a.send_back.setIcon(themed_icon("export"))  # a copy goes out, as an export does


def shortcut_rows(a: WindowActions) -> list[tuple[str, str]]:
    """(what, keys) for the keymap dialog, read from the actions themselves."""
    rows = []
    for action in (
        a.new, a.open, a.import_, a.export, a.close, a.quit, a.settings, a.annotate,
        a.run_metrics, a.larger, a.smaller, a.reset_size, a.guide, a.keymap,
    ):  # fmt: skip
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if keys and action.isVisible():  # rater mode hides the lead's actions
            rows.append((action.text().replace("&", "").rstrip("…"), keys))
    return rows
