"""Start the desktop app: `meaningbench gui`, `meaningbench demo` and `python -m app` end here.

Start-up order matters for the first figure users see: the window is shown first, and the
study opens on the first turn of the event loop. Nothing here imports torch, transformers
or the neural metrics; those load when a job needs them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app import __version__
from app.settings import APP_NAME, UserPrefs

ORGANIZATION = "MeaningBench"
DESKTOP_FILE = "meaningbench"


def create_application(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        return app
    QApplication.setApplicationName(APP_NAME)
    QApplication.setOrganizationName(ORGANIZATION)
    QApplication.setApplicationVersion(__version__)
    QApplication.setDesktopFileName(DESKTOP_FILE)
    return QApplication([sys.argv[0] if sys.argv else "meaningbench", *(argv or [])])


def start(argv: list[str] | None = None, *, open_initial: bool = True):  # -> MainWindow
    """Create the application and the main window, show it, and schedule the study to open.

    Returns the window; the caller runs the event loop (`launch` does, tests use qtbot).
    """
    from app.ui.icons import app_icon
    from app.ui.main_window import MainWindow
    from app.ui.theme import ThemeManager

    args = list(argv or [])
    study = args[0] if args else None
    app = create_application()
    prefs = UserPrefs.load()
    theme = ThemeManager(app)
    theme.apply(choice=prefs.theme, scale=prefs.text_scale)
    app.setWindowIcon(app_icon())
    window = MainWindow(theme=theme, prefs=prefs)
    window.show()
    if open_initial:
        QTimer.singleShot(0, lambda: open_initial_study(window, study))
    return window


def open_initial_study(window, study: str | None) -> None:  # noqa: ANN001 - MainWindow
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
    return int(code)
