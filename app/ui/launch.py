"""Start the desktop app: `meaningbench gui`, `meaningbench demo` and `python -m meaningbench` end here.

Start-up order matters for the first figure users see: the window is shown first, and the
study opens on the first turn of the event loop. Nothing here imports torch, transformers
or the neural metrics; those load when a job needs them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from meaningbench import __version__
from meaningbench.settings import APP_NAME, UserPrefs

if TYPE_CHECKING:
    from meaningbench.ui.main_window import MainWindow

ORGANIZATION = "MeaningBench"
DESKTOP_FILE = "meaningbench"
FIRST_PAINT_FALLBACK_MS = 1000


def create_application(argv: list[str] | None = None) -> QApplication:
    from meaningbench.ui.gui_thread_gc import collect_on_gui_thread

    app = QApplication.instance()
    if not isinstance(app, QApplication):
        QApplication.setApplicationName(APP_NAME)
        QApplication.setOrganizationName(ORGANIZATION)
        QApplication.setApplicationVersion(__version__)
        QApplication.setDesktopFileName(DESKTOP_FILE)
        app = QApplication([sys.argv[0] if sys.argv else "meaningbench", *(argv or [])])
    collect_on_gui_thread(app)  # before any job starts a worker thread
    return app


def start(argv: list[str] | None = None, *, open_initial: bool = True) -> MainWindow:
    """Create the application and the main window, show it, and schedule the study to open.

    Returns the window; the caller runs the event loop (`launch` does, tests use qtbot).
    """
    from meaningbench.ui.crash_log import install_crash_log, report_earlier_crash
    from meaningbench.ui.fault_hook import install_fault_hook
    from meaningbench.ui.icons import app_icon
    from meaningbench.ui.main_window import MainWindow
    from meaningbench.ui.theme import ThemeManager

    args = list(argv or [])
    study = args[0] if args else None
    app = create_application()
    prefs = UserPrefs.load()
    theme = ThemeManager(app)
    theme.apply(choice=prefs.theme, scale=prefs.text_scale)
    app.setWindowIcon(app_icon())
    window = MainWindow(theme=theme, prefs=prefs)
    install_crash_log(window)  # before the full-disk messages, which pass the rest on to it
    install_fault_hook(window)
    window.show()
    report_earlier_crash(window)
    if open_initial:
        threading.Thread(target=preload_study_modules, name="preload", daemon=True).start()
        after_first_paint(window, lambda: open_initial_study(window, study))
    return window


def preload_study_modules() -> None:
    """Import what opening a study needs (SQLAlchemy, Alembic, pandas) while the window paints.

    Only imports: the GUI thread opens the study itself after the first paint and finds
    the modules loaded (or waits on the import lock for the one still loading).
    """
    from meaningbench.queries.preload import import_study_modules

    import_study_modules()


class _FirstPaint(QObject):
    """Runs a callback once the window has painted (or after a fallback delay).

    Opening a study takes a moment (schema check, first rows); doing it after the first
    paint means the user sees the window at once rather than when the study is ready.
    """

    def __init__(self, window: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(window)
        self._window, self._callback, self._done = window, callback, False
        QApplication.instance().installEventFilter(self)  # type: ignore[union-attr]
        QTimer.singleShot(FIRST_PAINT_FALLBACK_MS, self._fire)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (
            not self._done
            and event.type() == QEvent.Type.Paint
            and isinstance(obj, QWidget)
            and obj.window() is self._window
        ):
            QTimer.singleShot(0, self._fire)  # after this paint has finished
        return False

    def _fire(self) -> None:
        if self._done:
            return
        self._done = True
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        self._callback()


def after_first_paint(window: QWidget, callback: Callable[[], None]) -> None:
    _FirstPaint(window, callback)


def open_initial_study(window: MainWindow, study: str | None) -> None:
    """The study named on the command line, else the most recent one, else the welcome page."""
    if study:
        window.studies.open_path(Path(study))
        return
    window.studies.open_most_recent()


def launch(argv: list[str] | None = None) -> int:
    """Run the desktop app until its window closes; returns the exit code."""
    app = create_application()
    window = start(argv)
    code = app.exec()
    del window
    from meaningbench.ui.crash_log import close_session_log

    close_session_log()
    return int(code)
