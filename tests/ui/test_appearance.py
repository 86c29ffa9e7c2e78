"""Themes (system / light / dark), text size, and the saved window state."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from meaningbench.settings import UserPrefs
from meaningbench.ui.theme import build_palette
from tests.ui.conftest import open_in


def window_color() -> str:
    return QApplication.palette().color(QPalette.ColorRole.Window).name()


def lightness() -> float:
    return QApplication.palette().color(QPalette.ColorRole.Window).lightnessF()


def test_theme_switch_and_it_is_remembered(window, qtbot) -> None:
    window.set_theme("dark")
    assert window.theme.current == "dark" and lightness() < 0.3
    assert window_color() == build_palette("dark").color(QPalette.ColorRole.Window).name()
    assert window.actions_.theme["dark"].isChecked()
    assert "#1f2226" in QApplication.instance().styleSheet()  # the dark style sheet
    assert UserPrefs.load().theme == "dark"
    window.set_theme("light")
    assert lightness() > 0.8 and UserPrefs.load().theme == "light"


def test_system_theme_follows_the_platform(window, qtbot) -> None:
    # Offscreen and Xvfb have no colour scheme to switch, so the platform's change
    # notification is emitted here as the platform would emit it.
    hints = QGuiApplication.styleHints()
    window.set_theme("system")
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert window.theme.current == "dark" and lightness() < 0.3
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert window.theme.current == "light" and lightness() > 0.8
    window.set_theme("light")
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # an explicit choice stays
    assert window.theme.current == "light"
    window.set_theme("system")  # and back to following the platform, which is dark now
    assert window.theme.current == "dark"
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Unknown)


def test_text_size_scales_fonts_app_wide(window, qtbot, study_with_facts) -> None:
    path, _ = study_with_facts
    open_in(window, path, qtbot)
    base = window.theme.point_size() / window.theme.scale
    table = window.page("browser").table
    before = table.font().pointSizeF()
    window.change_text_size(+1)
    window.change_text_size(+1)
    assert abs(window.theme.scale - 1.2) < 1e-9
    assert abs(QApplication.font().pointSizeF() - base * 1.2) < 0.01
    assert table.font().pointSizeF() > before  # widgets follow the application font
    assert abs(UserPrefs.load().text_scale - 1.2) < 1e-9
    for _ in range(30):
        window.change_text_size(-1)
    assert window.theme.scale == 0.7  # clamped
    window.change_text_size(0)
    assert window.theme.scale == 1.0 and abs(QApplication.font().pointSizeF() - base) < 0.01


def test_window_state_is_restored(qtbot, study_with_facts) -> None:
    from meaningbench.ui.launch import start

    path, _ = study_with_facts
    first = start(None, open_initial=False)
    qtbot.addWidget(first)
    open_in(first, path, qtbot)
    first.resize(first.minimumSizeHint().width(), 503)  # fits the offscreen 800 x 800 screen
    size = first.size()
    first.show_page("annotate")
    page = first.page("browser")
    page.splitter.setSizes([500, 500])
    sizes = page.splitter.sizes()
    first.close()

    second = start([str(path)])
    qtbot.addWidget(second)
    qtbot.waitUntil(lambda: second.context.study is not None, timeout=5000)
    assert second.size() == size and size.height() == 503
    assert second.current_page() == "annotate"
    restored = second.page("browser").splitter.sizes()
    # The page may be laid out at another width when the state comes back: the split
    # keeps its proportion (the default split is about 5:2, this one 1:1).
    assert abs(restored[0] / sum(restored) - sizes[0] / sum(sizes)) < 0.02
    second.close()
