"""A full disk or a read-only study while rating: a skip, a flag or a practice answer that
cannot be written says so in the same words as a rating that cannot, leaves the screen as it
was, and loses nothing already submitted; once there is room the same key works."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from sqlalchemy import select

from meaningbench.annotation.practice import PracticeSession, add_practice
from meaningbench.db.models import ItemNote, PracticeAnswer, Rating
from meaningbench.db.study import Study
from tests.ui.annotation.conftest import press, shown, type_text
from tests.ui.annotation.faults import full_disk, read_only

K = Qt.Key
Fault = Callable[[], AbstractContextManager[None]]
# What the message says for each fault (the same for every write).
SAYS = {"full disk": "cannot write", "read-only": "the study is read-only"}


@pytest.fixture(params=sorted(SAYS))
def fault(request: pytest.FixtureRequest, study: Study) -> tuple[str, Fault]:
    kind = request.param
    return kind, (full_disk if kind == "full disk" else lambda: read_only(study))


def _message(qtbot, screen: QWidget) -> tuple[str, str]:  # noqa: ANN001
    """The title and text of the message box the screen opened; closed once read."""
    qtbot.waitUntil(lambda: bool(screen.findChildren(QMessageBox)))
    (box,) = screen.findChildren(QMessageBox)
    said = (box.windowTitle(), box.text())
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
    box.close()
    box.setParent(None)
    return said


def _ratings(study: Study) -> list[tuple[int, float]]:
    with study.session() as s:
        rows = s.execute(
            select(Rating.item_id, Rating.value).where(Rating.state == "current")
        ).all()
    return [(r[0], r[1]) for r in rows]


def _rated_one(qtbot, screen) -> tuple[int, float]:  # noqa: ANN001
    item = screen.current_item().item_id
    type_text(qtbot, screen, "55")
    press(qtbot, screen, K.Key_Return)
    return item, 55.0


def _flag(qtbot, screen, comment: str) -> None:  # noqa: ANN001
    press(qtbot, screen, K.Key_F)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is screen._flag_dialog.comment)
    type_text(qtbot, screen, comment)
    press(qtbot, screen, K.Key_Return)


def _rate_and_skip(qtbot, screen, failing: Fault) -> list[tuple[str, str]]:  # noqa: ANN001
    """Enter (the scales are set) and S under `failing`: what each write's message said."""
    said = []
    with failing():
        for key in (K.Key_Return, K.Key_S):
            press(qtbot, screen, key)
            said.append(_message(qtbot, screen))
    return said


def test_a_skip_on_a_failing_disk_says_what_a_rating_says(qtbot, make_screen, study, fault) -> None:
    kind, failing = fault
    screen = make_screen()
    first = _rated_one(qtbot, screen)
    item = screen.current_item().item_id
    type_text(qtbot, screen, "40")
    (rating_title, rating_says), (skip_title, skip_says) = _rate_and_skip(qtbot, screen, failing)
    assert (rating_title, skip_title) == ("Rating not saved", "Skip not saved")
    assert skip_says == rating_says and SAYS[kind] in skip_says
    # The screen is as it was: the same item, the rater's value still on the slider.
    assert screen.current_item().item_id == item and screen.rows[0].scale.value() == 40
    assert _ratings(study) == [first]
    press(qtbot, screen, K.Key_S)  # room again: the same key skips
    assert screen.current_item().item_id != item and not screen.findChildren(QMessageBox)
    assert _ratings(study) == [first]
    # The skip that failed was not counted: the label says what the file holds.
    assert screen.progress_label.text().startswith("Item 2 of 12 · 1 skipped · ")


def test_an_undo_on_a_failing_disk_leaves_the_counts(qtbot, make_screen, study, fault) -> None:
    kind, failing = fault
    screen = make_screen()
    first, _value = _rated_one(qtbot, screen)
    on_screen = screen.current_item().item_id
    with failing():
        press(qtbot, screen, K.Key_Z, Qt.KeyboardModifier.ControlModifier)
        title, says = _message(qtbot, screen)
    assert title == "Undo not saved" and SAYS[kind] in says
    assert screen.current_item().item_id == on_screen and not screen.queue.reviewing
    assert screen.progress_label.text().startswith("Item 2 of 12 · ")
    press(qtbot, screen, K.Key_Z, Qt.KeyboardModifier.ControlModifier)  # room again
    assert screen.current_item().item_id == first and _ratings(study) == []
    assert screen.progress_label.text().startswith("Item 1 of 12 · ")


def test_a_flag_on_a_failing_disk_says_what_a_rating_says(qtbot, make_screen, study, fault) -> None:
    kind, failing = fault
    screen = make_screen()
    first = _rated_one(qtbot, screen)
    item = screen.current_item().item_id
    with failing():
        _flag(qtbot, screen, "cut off")
        title, says = _message(qtbot, screen)
    assert title == "Flag not saved" and SAYS[kind] in says
    assert not screen.flag_chip.isVisible() and not screen.current_item().flagged
    with study.session() as s:
        assert s.scalars(select(ItemNote)).all() == []
    assert _ratings(study) == [first]
    _flag(qtbot, screen, "")
    assert screen.flag_chip.isVisible() and screen.current_item().item_id == item
    assert _ratings(study) == [first]


def test_a_practice_answer_on_a_failing_disk_is_kept_to_try_again(qtbot, study, fault) -> None:
    from meaningbench.ui.annotation.practice_screen import PracticeScreen

    kind, failing = fault
    add_practice(study, [("The cat sat on the mat.", "The cat sat.", 60.0, 90.0, "")])
    screen = shown(qtbot, PracticeScreen(study, "newcomer"), None)
    type_text(qtbot, screen, "7")
    with failing():
        press(qtbot, screen, K.Key_Return)
        title, says = _message(qtbot, screen)
    assert title == "Answer not saved" and SAYS[kind] in says
    assert screen.feedback is None and screen.result.text() == ""
    assert screen.row.scale.value() == 70
    with study.session() as s:
        assert s.scalars(select(PracticeAnswer)).all() == []
    press(qtbot, screen, K.Key_Return)
    assert screen.result.text().startswith("✓ You gave 70")
    assert PracticeSession(study, "newcomer").pending() == []


def test_the_side_by_side_screen_on_a_failing_disk_keeps_the_unit(
    qtbot, make_sxs, study, fault
) -> None:
    kind, failing = fault
    screen = make_sxs()
    unit = screen.current_unit().item_ids
    for i in range(len(unit)):
        if i:
            press(qtbot, screen, K.Key_Tab)
        type_text(qtbot, screen, "6")
    (rating_title, rating_says), (skip_title, skip_says) = _rate_and_skip(qtbot, screen, failing)
    with failing():
        _flag(qtbot, screen, "cut off")
        flag_title, flag_says = _message(qtbot, screen)
    assert (rating_title, skip_title, flag_title) == (
        "Rating not saved",
        "Skip not saved",
        "Flag not saved",
    )
    assert rating_says == skip_says == flag_says and SAYS[kind] in rating_says
    assert screen.current_unit().item_ids == unit
    assert [c.row.scale.value() for c in screen.columns] == [60] * len(unit)
    assert _ratings(study) == []
    with study.session() as s:
        assert s.scalars(select(ItemNote)).all() == []
    press(qtbot, screen, K.Key_Return)  # room again: the same key submits
    assert sorted(_ratings(study)) == [(i, 60.0) for i in sorted(unit)]
