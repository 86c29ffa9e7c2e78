"""Where the window's state lives: an INI file in the user's data folder.

Kept beside the preferences (and under MEANINGBENCH_HOME when set) rather than in the
platform's registry, so a portable install and the tests keep their state to themselves.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSettings, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from meaningbench.settings import data_dir


def window_settings() -> QSettings:
    return QSettings(str(data_dir() / "window.ini"), QSettings.Format.IniFormat)


DEFAULT_SIZE = QSize(1280, 800)
# Room left for the title bar and frame the window manager adds around the window.
FRAME_ALLOWANCE = QSize(16, 48)


def default_geometry(available: QRect) -> QRect:
    """The first-start geometry: 1280×800 where the screen has room, else as much of the
    screen's free area (without panels and docks) as the frame leaves, centred in it.
    A 1366×768 laptop would otherwise put the status bar and the rating screen's buttons
    below the bottom edge."""
    width = max(1, min(DEFAULT_SIZE.width(), available.width() - FRAME_ALLOWANCE.width()))
    height = max(1, min(DEFAULT_SIZE.height(), available.height() - FRAME_ALLOWANCE.height()))
    rect = QRect(0, 0, width, height)
    rect.moveCenter(available.center())
    return rect


def fitted_size(wanted: QSize, available: QSize) -> QSize:
    """`wanted`, or less where the screen's free area (less the frame) has not that room."""
    room = available - FRAME_ALLOWANCE
    return wanted.boundedTo(QSize(max(1, room.width()), max(1, room.height())))


def open_at(widget: QWidget, wanted: QSize) -> None:
    """Give a dialog its opening size: `wanted` where its screen has room, else what the
    screen leaves (1024×640 leaves about 1008×592); what then does not fit scrolls inside."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        widget.resize(wanted)
        return
    widget.resize(fitted_size(wanted, screen.availableGeometry().size()))
