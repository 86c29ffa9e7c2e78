"""Hidden quality-control items stay hidden from raters: no word of them on the window
while someone rates — status bar, counts, labels, buttons or tooltips."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QWidget

from tests.ui.conftest import open_in


def visible_texts(window: QWidget) -> list[str]:
    texts = []
    for w in window.findChildren(QWidget):
        if not w.isVisible():
            continue
        if isinstance(w, QLabel | QAbstractButton):
            texts.append(w.text())
        texts.append(w.toolTip())
    return [t for t in texts if t]


def test_a_rater_never_sees_that_control_items_exist(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    assert facts.control_ids  # the study has hidden control items
    window.show()
    open_in(window, path, qtbot)
    window.refresh_counts()
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert page.start("ann1")
    screen = page.screen
    # Rate a few items by keyboard, as a rater would.
    for _ in range(3):
        qtbot.keyClicks(QApplication.focusWidget() or screen, "60")
        qtbot.keyClick(QApplication.focusWidget() or screen, Qt.Key.Key_Return)
    window.refresh_counts()
    QApplication.processEvents()
    texts = visible_texts(window)
    assert window.status.counts_label.text() in texts
    leaks = [t for t in texts if "control" in t.casefold()]
    assert leaks == []
    window.close()
    summary = page.summary_dialog  # the quit summary names raters and counts, no kinds
    assert summary is not None and "control" not in summary.findChild(QLabel).text().casefold()
    summary.close()
