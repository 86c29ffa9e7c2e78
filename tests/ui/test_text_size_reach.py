"""Ctrl++ / Ctrl+- resize what matters most: the sentences being rated and the plots."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import open_in
from tests.ui.dashboard.conftest import wait_ready

CTRL = Qt.KeyboardModifier.ControlModifier


def sizes(window) -> tuple[float, float, float]:  # noqa: ANN001
    screen = window.page("annotate").screen
    bars = window.page("dashboard").correlations.bars.plot
    tick = bars.getPlotItem().getAxis("bottom").style["tickFont"]
    return (
        screen.pair.source.text.font().pointSizeF(),
        screen.rows[0].question.font().pointSizeF(),
        tick.pointSizeF(),
    )


def test_ctrl_plus_and_minus_scale_the_rated_sentences_and_the_plots(
    window, qtbot, study_with_facts
) -> None:
    path, _ = study_with_facts
    window.show()
    open_in(window, path, qtbot)
    assert window.show_page("dashboard")
    wait_ready(qtbot, window.page("dashboard"))
    assert window.show_page("annotate")
    assert window.page("annotate").start("ann1")
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    before = sizes(window)
    qtbot.keyClick(window, Qt.Key.Key_Plus, CTRL)
    qtbot.keyClick(window, Qt.Key.Key_Plus, CTRL)
    qtbot.waitUntil(
        lambda: all(b > a for a, b in zip(before, sizes(window), strict=True)), timeout=2000
    )
    larger = sizes(window)
    qtbot.keyClick(window, Qt.Key.Key_Minus, CTRL)
    qtbot.waitUntil(
        lambda: all(c < b for b, c in zip(larger, sizes(window), strict=True)), timeout=2000
    )
    qtbot.keyClick(window, Qt.Key.Key_0, CTRL)
