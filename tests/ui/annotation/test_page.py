"""The Annotate page hosts the rating screen inside the window; ratings reach the browser."""

from __future__ import annotations

import sqlite3

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from meaningbench.runtime.changes import StudyChanges
from tests.ui.conftest import open_in


def ratings_by(path, name: str) -> list[tuple[int, float]]:  # noqa: ANN001
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT r.item_id, r.value FROM rating r JOIN annotator a ON a.id = r.annotator_id "
            "WHERE a.name = ? AND r.state = 'current' ORDER BY r.id",
            (name,),
        ).fetchall()
    finally:
        conn.close()


def test_rating_inside_the_window_updates_the_browser(window, qtbot, study_with_facts) -> None:
    path, _ = study_with_facts
    open_in(window, path, qtbot)
    browser = window.page("browser")
    changed: list[StudyChanges] = []
    window.context.study_changed.connect(changed.append)
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert page.start("tester")
    screen = page.screen
    assert page.stack.currentWidget() is screen and screen.isVisible()
    item_id = screen.current_item().item_id
    target = QApplication.focusWidget() or screen
    qtbot.keyClicks(target, "75")
    qtbot.keyClick(QApplication.focusWidget() or screen, Qt.Key.Key_Return)
    assert ratings_by(path, "tester") == [(item_id, 75.0)]
    assert changed == [StudyChanges.of(ratings=[item_id])]  # told once, nothing else
    row = browser.model.row_of(item_id)
    if row is not None:  # a control item is not in the default (regular) view
        n = browser.model.data(browser.model.index(row, browser.model.column_of("ratings")))
        conn = sqlite3.connect(path)
        (expected,) = conn.execute(
            "SELECT COUNT(*) FROM rating WHERE item_id = ? AND state = 'current'", (item_id,)
        ).fetchone()
        conn.close()
        assert n == str(expected)
    # An undo is a change to the study too: the views hear of it.
    changed.clear()
    qtbot.keyClick(
        QApplication.focusWidget() or screen, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier
    )
    assert ratings_by(path, "tester") == []
    assert changed == [StudyChanges.of(ratings=[item_id])]
    page.stop()
    assert page.screen is None and page.stack.currentWidget() is page.intro


def test_the_picker_chooses_who_rates(window, qtbot, study_with_facts) -> None:
    from meaningbench.ui.annotation.picker import AnnotatorPicker

    path, _ = study_with_facts
    open_in(window, path, qtbot)

    def answer() -> None:
        picker = next(
            w for w in QApplication.topLevelWidgets()
            if isinstance(w, AnnotatorPicker) and w.isVisible()
        )  # fmt: skip
        picker.new_name.setText("newcomer")
        picker.accept()  # a new rater: the first accept asks, the second confirms
        assert picker.isVisible() and picker.confirm.isVisible()
        picker.accept()

    QTimer.singleShot(200, answer)
    window.start_annotation()
    page = window.page("annotate")
    assert window.current_page() == "annotate"
    assert page.annotator == "newcomer" and page.screen is not None
    window.studies.close_study()
    assert page.screen is None
