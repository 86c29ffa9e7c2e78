"""The flag dialog is part of the keyboard flow: F, type, Enter — and Esc backs out."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from sqlalchemy import select

from meaningbench.db.models import ItemNote
from tests.ui.annotation.conftest import press, type_text

K = Qt.Key


def test_the_flag_dialog_is_confirmed_and_cancelled_from_the_keyboard(
    qtbot, make_screen, study
) -> None:
    screen = make_screen()
    item = screen.current_item().item_id
    press(qtbot, screen, K.Key_F)
    dialog = screen._flag_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is dialog.comment)
    type_text(qtbot, screen, "cut off")
    press(qtbot, screen, K.Key_Return, Qt.KeyboardModifier.ShiftModifier)  # a new line
    type_text(qtbot, screen, "at the end")
    press(qtbot, screen, K.Key_Return)
    assert screen._flag_dialog is None and screen.flag_chip.isVisible()
    with study.session() as s:
        note = s.scalar(select(ItemNote))
        assert (note.item_id, note.flagged, note.comment) == (item, True, "cut off\nat the end")
    qtbot.waitUntil(lambda: QApplication.focusWidget() is screen.rows[0].scale)
    # Esc leaves the flag as it was.
    press(qtbot, screen, K.Key_F)
    dialog = screen._flag_dialog
    assert dialog is not None
    qtbot.waitUntil(lambda: QApplication.focusWidget() is dialog.comment)
    type_text(qtbot, screen, " more")
    press(qtbot, screen, K.Key_Escape)
    assert screen._flag_dialog is None
    with study.session() as s:
        assert s.scalar(select(ItemNote.comment)) == "cut off\nat the end"
