"""The practice pass mark in a rater's window: each attempt's end says how it went and how
many attempts are left; out of attempts, a study that stops raters shows why they cannot
start yet (and no rating screen), one that flags them lets them rate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from meaningbench.annotation.practice import add_practice, rater_standing
from meaningbench.annotation.protocols import PracticeOptions, set_protocol
from meaningbench.db.study import open_study
from meaningbench.kits.making import make_kits
from meaningbench.ui.launch import open_initial_study
from tests.annotation.test_practice_pass_mark import PRACTICE
from tests.kits.campaign_helpers import lead_study
from tests.ui.annotation.conftest import press, type_text

K = Qt.Key
# Digits set the slider in tens: 0, 90, 0 miss every range (60–90, 0–20, 90–100) by far.
MISS = ("0", "9", "0")


def _kit(tmp_path: Path, after: str) -> Path:
    lead = lead_study(tmp_path / "lead.mbstudy", seed=1, n_sources=2)
    try:
        add_practice(lead, PRACTICE)
        set_protocol(lead, practice=PracticeOptions(2, 5.0, 2, after, out_of=3))
        [made] = make_kits(lead, ["ana"], tmp_path / "kits")
    finally:
        lead.close()
    return made.path


def _attempt(qtbot: Any, page: Any, digits: tuple[str, ...]) -> None:
    screen = page.practice
    for digit in digits:
        type_text(qtbot, screen, digit)
        press(qtbot, screen, K.Key_Return)  # the feedback
        assert screen.result.text()[:1] in "✓✗"
        press(qtbot, screen, K.Key_Return)  # on: the next item, or the attempt's end


def test_a_rater_out_of_attempts_is_stopped_and_told_why(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    kit = _kit(tmp_path, "stop")
    open_initial_study(window, str(kit))
    page = window.page("annotate")
    screen = page.practice
    assert screen is not None and page.screen is None
    assert "Practice 1 of 3 (attempt 1 of 2)" in screen.banner.text()
    _attempt(qtbot, page, MISS)
    assert "Attempt 1: 0 of 3 within 5 points" in screen.result.text()
    assert "1 attempt left" in screen.result.text()
    press(qtbot, screen, K.Key_Return)
    assert "attempt 2 of 2" in screen.banner.text()
    _attempt(qtbot, page, MISS)
    assert screen.title.isVisible() and screen.title.text() == "You cannot start rating yet"
    assert "did not reach the practice pass mark in 2 attempts" in screen.result.text()
    assert "Contact your study lead" in screen.result.text()
    assert screen.send_back.isVisible() and not screen.pair.isVisible()
    press(qtbot, screen, K.Key_Return)  # Enter changes nothing: no rating screen
    assert page.screen is None and page.practice is screen
    # Opened again, the kit shows the refusal at once.
    assert window.studies.open_path(kit)
    page = window.page("annotate")
    assert page.screen is None and page.practice is not None and page.practice.standing.stopped
    # Send back takes the practice answers to the lead.
    dialog = window.rater_mode.send_back()
    assert dialog is not None and "practice answers" in dialog.intro.text()
    dialog.close()


def test_a_flagged_rater_rates_after_the_last_failed_attempt(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    kit = _kit(tmp_path, "flag")
    open_initial_study(window, str(kit))
    page = window.page("annotate")
    _attempt(qtbot, page, MISS)
    press(qtbot, page.practice, K.Key_Return)
    _attempt(qtbot, page, MISS)
    assert "your study lead will see that the practice was not passed" in (
        page.practice.result.text()
    )
    press(qtbot, page.practice, K.Key_Return)
    assert page.practice is None and page.screen is not None
    study = open_study(kit)
    try:
        standing = rater_standing(study, "ana")
        assert standing is not None and standing.flagged
    finally:
        study.close()


def test_a_passed_attempt_opens_the_rating_screen(window: Any, qtbot: Any, tmp_path: Path) -> None:
    kit = _kit(tmp_path, "stop")
    open_initial_study(window, str(kit))
    page = window.page("annotate")
    _attempt(qtbot, page, ("7", "1", "9"))
    assert "Attempt 1: 3 of 3" in page.practice.result.text()
    assert "you passed" in page.practice.result.text()
    press(qtbot, page.practice, K.Key_Return)
    assert page.practice is None and page.screen is not None
