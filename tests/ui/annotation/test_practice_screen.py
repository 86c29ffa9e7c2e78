"""The practice block by keys: score, see the feedback, go on; then the study's queue."""

from __future__ import annotations

from PySide6.QtCore import Qt

from meaningbench.annotation.practice import PracticeSession, add_practice, practice_results
from tests.ui.annotation.conftest import press, type_text

K = Qt.Key


def test_practice_gives_feedback_and_then_ends(qtbot, study) -> None:
    from meaningbench.ui.annotation.practice_screen import PracticeScreen

    add_practice(
        study,
        [
            ("The cat sat on the mat.", "The cat sat.", 60.0, 90.0, "Only the place is lost."),
            ("The storm closed the bridge.", "The bridge opened.", 0.0, 20.0, "Reversed."),
        ],
    )
    screen = PracticeScreen(study, "newcomer")
    qtbot.addWidget(screen)
    with qtbot.waitActive(screen):
        screen.show()
        screen.activateWindow()
    assert screen.pair.texts() == ("The cat sat on the mat.", "The cat sat.")
    assert "Practice 1 of 2" in screen.banner.text()
    press(qtbot, screen, K.Key_Return)
    assert screen.result.text() == "", "no score yet: no answer"
    for mod in (Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.AltModifier):
        qtbot.keyClick(screen, K.Key_3, mod)  # a chord, not a value
    press(qtbot, screen, K.Key_Return)
    assert screen.row.scale.value() is None and screen.result.text() == ""
    type_text(qtbot, screen, "7")
    press(qtbot, screen, K.Key_Return)
    assert screen.result.text().startswith("✓ You gave 70: within the expected 60–90.")
    assert "Only the place is lost." in screen.result.text()
    press(qtbot, screen, K.Key_Return)
    assert screen.pair.texts() == ("The storm closed the bridge.", "The bridge opened.")
    type_text(qtbot, screen, "5")
    press(qtbot, screen, K.Key_Return)
    assert screen.result.text().startswith("✗ You gave 50: above the expected 0–20.")
    with qtbot.waitSignal(screen.done):
        press(qtbot, screen, K.Key_Return)
    [result] = practice_results(study)
    assert (result.rater, result.answered, result.passed) == ("newcomer", 2, 1)
    assert PracticeSession(study, "newcomer").pending() == []
