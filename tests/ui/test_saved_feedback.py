"""A rater sees each rating saved (with the time), and on quit what was saved."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QLabel

from tests.ui.annotation.test_page import ratings_by
from tests.ui.conftest import open_in


def rate(qtbot, screen, digits: str) -> None:  # noqa: ANN001
    qtbot.keyClicks(QApplication.focusWidget() or screen, digits)
    qtbot.keyClick(QApplication.focusWidget() or screen, Qt.Key.Key_Return)


def test_saved_stamp_after_each_rating_and_a_summary_on_quit(
    window, qtbot, study_with_facts
) -> None:
    path, _ = study_with_facts
    window.show()
    open_in(window, path, qtbot)
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert page.start("newbie")
    screen = page.screen
    assert screen.saved_label.text() == ""  # nothing saved yet: nothing claimed
    rate(qtbot, screen, "40")
    stamp = screen.saved_label.text()
    assert screen.saved_label.isVisible() and re.fullmatch(r"Saved ✓ \d\d:\d\d:\d\d", stamp)
    rate(qtbot, screen, "70")
    rate(qtbot, screen, "90")
    qtbot.keyClick(
        QApplication.focusWidget() or screen, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier
    )
    assert "Undo saved ✓" in screen.saved_label.text()
    assert len(ratings_by(path, "newbie")) == 2
    window.close()
    box = page.summary_dialog
    assert isinstance(box, QDialog) and box.isVisible() and box.objectName() == "quitSummary"
    text = box.findChild(QLabel, "quitSummaryText").text()
    assert "newbie: 2 ratings saved" in text and path.name in text
    box.close()


def test_the_quit_summary_counts_each_study_on_its_own(window, qtbot, tmp_path) -> None:
    from tests.ui.factories import populated_study

    paths = []
    for name in ("dev.mbstudy", "test.mbstudy"):
        study, _ = populated_study(tmp_path / name)
        paths.append(study.path)
        study.close()
    window.show()
    for path, n in zip(paths, (2, 3), strict=True):
        open_in(window, path, qtbot)
        assert window.show_page("annotate")
        page = window.page("annotate")
        assert page.start("ana")
        for _ in range(n):
            rate(qtbot, page.screen, "55")
        assert len(ratings_by(path, "ana")) == n
    window.close()
    text = page.summary_dialog.findChild(QLabel, "quitSummaryText").text()
    assert "ana: 2 ratings saved to dev.mbstudy" in text
    assert "ana: 3 ratings saved to test.mbstudy" in text
    assert "5 ratings" not in text
    page.summary_dialog.close()
