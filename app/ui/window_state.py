"""Where the window's state lives: an INI file in the user's data folder.

Kept beside the preferences (and under MEANINGBENCH_HOME when set) rather than in the
platform's registry, so a portable install and the tests keep their state to themselves.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings

from meaningbench.settings import data_dir


def window_settings() -> QSettings:
    return QSettings(str(data_dir() / "window.ini"), QSettings.Format.IniFormat)
