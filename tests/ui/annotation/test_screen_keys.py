"""Every key of the rating screen, offscreen, against the study file it writes to."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from sqlalchemy import select

from meaningbench.db.models import ItemNote, QueueEntry, Rating
from meaningbench.ui.annotation.keymap import KEYMAP
from meaningbench.ui.annotation.rows import UNSET_TEXT
from meaningbench.ui.annotation.screen import HINT_BLOCKED
from tests.ui.annotation.conftest import activate, press, type_text

K = Qt.Key
ALT = Qt.KeyboardModifier.AltModifier
CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def _ratings(study, **where) -> list[Rating]:
    with study.session() as s:
        q = select(Rating).order_by(Rating.id)
        for key, value in where.items():
            q = q.where(getattr(Rating, key) == value)
        return list(s.scalars(q))


def _rate(qtbot, screen, digits: str = "5") -> int:
    item = screen.current_item().item_id
    type_text(qtbot, screen, digits)
    press(qtbot, screen, K.Key_Return)
    return item


def test_focus_starts_on_the_first_scale(make_screen) -> None:
    screen = make_screen()
    assert QApplication.focusWidget() is screen.rows[0].scale


def test_focusing_the_screen_focuses_a_scale(qtbot, make_screen) -> None:
    screen = make_screen()
    screen.hint.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    screen.hint.setFocus()
    screen.setFocus()  # what a hosting page does when it is shown
    assert QApplication.focusWidget() is screen.rows[0].scale
    press(qtbot, screen, K.Key_Right)
    assert screen.rows[0].scale.value() == 51


def test_slider_starts_unset_and_enter_does_nothing(qtbot, make_screen, study) -> None:
    screen = make_screen()
    row = screen.rows[0]
    item = screen.current_item().item_id
    assert row.scale.value() is None and row.number.text() == UNSET_TEXT
    assert not screen.submit_button.isEnabled()
    press(qtbot, screen, K.Key_Return)
    press(qtbot, screen, K.Key_Enter)
    assert _ratings(study) == []
    assert screen.current_item().item_id == item
    assert screen.hint.text() == HINT_BLOCKED


def test_typed_digits_and_no_carry_over(qtbot, make_screen, study) -> None:
    screen = make_screen()
    scale = screen.rows[0].scale
    now = [100.0]
    scale.clock = lambda: now[0]
    type_text(qtbot, screen, "7")
    assert scale.value() == 70 and screen.rows[0].number.text() == "70"
    type_text(qtbot, screen, "5")
    assert scale.value() == 75
    now[0] += 5  # after the pause a new number starts
    type_text(qtbot, screen, "0")
    assert scale.value() == 0
    now[0] += 5
    type_text(qtbot, screen, "100")
    assert scale.value() == 100
    now[0] += 5
    type_text(qtbot, screen, "42")
    first = screen.current_item().item_id
    press(qtbot, screen, K.Key_Return)
    [r] = _ratings(study)
    assert (r.item_id, r.value, r.start_value) == (first, 42.0, None)
    # The next item starts unset again: nothing carried over.
    assert screen.current_item().item_id != first
    assert screen.rows[0].scale.value() is None
    assert screen.rows[0].number.text() == UNSET_TEXT


def test_arrows_page_keys_home_end_move_the_slider(qtbot, make_screen) -> None:
    screen = make_screen()
    scale = screen.rows[0].scale
    press(qtbot, screen, K.Key_Right)
    assert scale.value() == 51  # from unset, steps start at the middle
    press(qtbot, screen, K.Key_Up)
    press(qtbot, screen, K.Key_PageUp)
    assert scale.value() == 62
    press(qtbot, screen, K.Key_PageDown)
    press(qtbot, screen, K.Key_Left)
    press(qtbot, screen, K.Key_Down)
    assert scale.value() == 50
    press(qtbot, screen, K.Key_End)
    press(qtbot, screen, K.Key_PageUp)
    assert scale.value() == 100
    press(qtbot, screen, K.Key_Home)
    assert scale.value() == 0
    assert scale.touched()


def test_mouse_sets_the_value_where_clicked(qtbot, make_screen) -> None:
    screen = make_screen()
    scale = screen.rows[0].scale
    track = scale._track()
    x = track.left() + 0.25 * track.width()
    qtbot.mouseClick(
        scale,
        Qt.MouseButton.LeftButton,
        pos=scale.rect().center().__class__(int(x), scale.height() // 2),
    )
    assert abs(scale.value() - 25) <= 1


def test_enter_submits_commits_and_shows_the_next_item(qtbot, make_screen, study) -> None:
    screen = make_screen()
    first = screen.current_item()
    type_text(qtbot, screen, "6")
    qtbot.wait(120)
    with qtbot.waitSignal(screen.submitted) as signal:
        press(qtbot, screen, K.Key_Return)
    assert signal.args == [first.item_id]
    [r] = _ratings(study)
    assert r.value == 60 and r.state == "current" and r.origin == "ui"
    assert r.shown_at == first.shown_at and r.duration_ms >= 120
    assert screen.pair.texts() != (first.source, first.output)
    shown = screen.current_item()
    assert screen.pair.texts() == (shown.source, shown.output)
    assert screen.progress_label.text().startswith("Item 2 of 12 · ")


def test_ctrl_z_undoes_and_reopens(qtbot, make_screen, study) -> None:
    screen = make_screen()
    rated = _rate(qtbot, screen, "3")
    with qtbot.waitSignal(screen.undone) as signal:
        press(qtbot, screen, K.Key_Z, CTRL)
    assert signal.args == [rated]
    assert screen.current_item().item_id == rated
    assert screen.rows[0].scale.value() is None, "reopened unset"
    assert [r.state for r in _ratings(study)] == ["undone"]
    press(qtbot, screen, K.Key_Z, CTRL)
    assert "Nothing to undo" in screen.hint.text()


def test_s_skips_and_the_item_comes_back_last(qtbot, make_screen, study) -> None:
    screen = make_screen()
    skipped = screen.current_item().item_id
    press(qtbot, screen, K.Key_S)
    assert screen.current_item().item_id != skipped
    assert _ratings(study) == []
    assert "1 skipped" in screen.progress_label.text()
    with study.session() as s:
        assert s.scalar(select(QueueEntry.skips).where(QueueEntry.item_id == skipped)) == 1
    seen = []
    while screen.current_item() is not None:
        seen.append(_rate(qtbot, screen))
    assert seen[-1] == skipped


def test_f_flags_with_a_comment_and_can_unflag(qtbot, make_screen, study) -> None:
    screen = make_screen()
    item = screen.current_item().item_id
    press(qtbot, screen, K.Key_F)
    dialog = screen._flag_dialog
    assert dialog is not None and dialog.isVisible() and dialog.remove_button is None
    qtbot.keyClicks(dialog.comment, "source is cut off")
    dialog.flag_button.click()
    assert screen.flag_chip.isVisible()
    with study.session() as s:
        note = s.scalar(select(ItemNote))
        assert (note.item_id, note.flagged, note.comment) == (item, True, "source is cut off")
    press(qtbot, screen, K.Key_F)
    dialog = screen._flag_dialog
    assert dialog.comment.toPlainText() == "source is cut off"
    dialog.remove_button.click()
    assert not screen.flag_chip.isVisible()
    assert QApplication.focusWidget() is screen.rows[0].scale
    # A flag does not rate: Enter is still blocked.
    press(qtbot, screen, K.Key_Return)
    assert _ratings(study) == []


def test_alt_and_ctrl_arrows_move_between_rated_items(qtbot, make_screen) -> None:
    screen = make_screen()
    a = _rate(qtbot, screen, "2")
    b = _rate(qtbot, screen, "4")
    frontier = screen.current_item().item_id
    press(qtbot, screen, K.Key_Left, ALT)
    shown = screen.current_item()
    assert shown.item_id == b and shown.reviewing and screen.banner.isVisible()
    assert screen.rows[0].scale.value() == 40 and screen.rows[0].number.text() == "40"
    press(qtbot, screen, K.Key_Left, CTRL)
    assert screen.current_item().item_id == a
    press(qtbot, screen, K.Key_Left, ALT)
    assert screen.current_item().item_id == a and "No earlier" in screen.hint.text()
    press(qtbot, screen, K.Key_Right, ALT)
    assert screen.current_item().item_id == b
    press(qtbot, screen, K.Key_Right, CTRL)
    assert screen.current_item().item_id == frontier and not screen.banner.isVisible()
    # A plain arrow moves the slider and never leaves the item.
    press(qtbot, screen, K.Key_Left)
    assert screen.current_item().item_id == frontier and screen.rows[0].scale.value() == 49


def test_revising_by_keys_supersedes_and_records_the_start(qtbot, make_screen, study) -> None:
    screen = make_screen()
    a = _rate(qtbot, screen, "2")
    _rate(qtbot, screen, "4")
    press(qtbot, screen, K.Key_Left, ALT)
    press(qtbot, screen, K.Key_Left, ALT)
    type_text(qtbot, screen, "35")
    press(qtbot, screen, K.Key_Return)
    old, new = _ratings(study, item_id=a)
    assert (old.state, new.state, new.value, new.start_value) == ("superseded", "current", 35, 20)
    assert new.supersedes_id == old.id
    # Enter on a revisited item without a change moves on and writes nothing.
    n = len(_ratings(study))
    press(qtbot, screen, K.Key_Return)
    assert len(_ratings(study)) == n and not screen.current_item().reviewing


def test_help_overlay_keys(qtbot, make_screen, study) -> None:
    screen = make_screen()
    type_text(qtbot, screen, "?")
    assert screen.keymap.isVisible()
    labels = " ".join(w.text() for w in screen.keymap.findChildren(type(screen.hint)))
    for keys, _ in KEYMAP:
        assert keys in labels
    type_text(qtbot, screen, "5")
    for key in (K.Key_Down, K.Key_Up, K.Key_End, K.Key_Home, K.Key_Delete, K.Key_Return):
        press(qtbot, screen, key)
    assert _ratings(study) == [], "keys other than close do nothing under the overlay"
    scale = screen.rows[0].scale
    assert scale.value() is None and not scale.touched(), "nor reach the scale beneath"
    press(qtbot, screen, K.Key_Escape)
    assert not screen.keymap.isVisible()
    assert QApplication.focusWidget() is scale, "the keyboard goes back where it was"
    press(qtbot, screen, K.Key_F1)
    assert screen.keymap.isVisible()
    press(qtbot, screen, K.Key_F1)
    assert not screen.keymap.isVisible()


def test_keys_under_the_overlay_leave_a_given_rating_as_it_was(qtbot, make_screen, study) -> None:
    screen = make_screen()
    item = _rate(qtbot, screen, "5")
    press(qtbot, screen, K.Key_Left, ALT)
    assert screen.current_item().item_id == item and screen.rows[0].scale.value() == 50
    type_text(qtbot, screen, "?")
    for key in (K.Key_Down, K.Key_Down, K.Key_End, K.Key_PageUp):
        press(qtbot, screen, key)
    type_text(qtbot, screen, "12")
    press(qtbot, screen, K.Key_Z, CTRL)
    press(qtbot, screen, K.Key_Escape)
    assert screen.rows[0].scale.value() == 50 and not screen.rows[0].scale.touched()
    press(qtbot, screen, K.Key_Return)
    assert [(r.item_id, r.value, r.state) for r in _ratings(study)] == [(item, 50.0, "current")]
    type_text(qtbot, screen, "7")  # the screen answers keys again
    press(qtbot, screen, K.Key_Return)
    assert [r.value for r in _ratings(study, state="current")] == [50.0, 70.0]


def test_g_opens_the_guidelines(qtbot, make_screen) -> None:
    screen = make_screen()
    assert not screen.guidelines.isVisible()
    press(qtbot, screen, K.Key_G)
    assert screen.guidelines.isVisible()
    assert "Rating meaning preservation" in screen.guidelines.browser.toPlainText()
    assert "#" not in screen.guidelines.browser.toPlainText().splitlines()[0], "rendered"
    press(qtbot, screen, K.Key_Escape)
    assert not screen.guidelines.isVisible()
    press(qtbot, screen, K.Key_G)
    press(qtbot, screen, K.Key_G)
    assert not screen.guidelines.isVisible()


def test_l_switches_between_side_by_side_and_stacked(qtbot, make_screen) -> None:
    screen = make_screen()
    src, out = screen.pair.source, screen.pair.output
    assert not screen.pair.stacked
    assert src.geometry().top() == out.geometry().top()
    press(qtbot, screen, K.Key_L)
    qtbot.wait(10)
    assert screen.pair.stacked
    assert out.geometry().top() > src.geometry().top()


def test_tab_moves_between_scales_and_likert_takes_digits(qtbot, make_screen, study) -> None:
    activate(study, "fluency", "likert")
    screen = make_screen()
    meaning, fluency = (row.scale for row in screen.rows)
    assert QApplication.focusWidget() is meaning
    press(qtbot, screen, K.Key_Tab)
    assert QApplication.focusWidget() is fluency
    type_text(qtbot, screen, "4")
    assert fluency.value() == 4
    type_text(qtbot, screen, "9")
    assert fluency.value() == 4, "9 is not on a 1–5 scale"
    press(qtbot, screen, K.Key_Right)
    assert fluency.value() == 5
    press(qtbot, screen, K.Key_Return)
    assert _ratings(study) == [], "meaning is still unset"
    press(qtbot, screen, K.Key_Tab)
    assert QApplication.focusWidget() is meaning
    press(qtbot, screen, K.Key_Backtab, SHIFT)
    assert QApplication.focusWidget() is fluency
    press(qtbot, screen, K.Key_Backtab, SHIFT)
    type_text(qtbot, screen, "8")
    press(qtbot, screen, K.Key_Return)
    assert sorted(r.value for r in _ratings(study)) == [5.0, 80.0]


def test_finished_when_all_items_are_rated(qtbot, make_screen) -> None:
    screen = make_screen()
    n = screen.queue.progress().total
    for _ in range(n - 1):
        _rate(qtbot, screen)
    with qtbot.waitSignal(screen.finished):
        _rate(qtbot, screen)
    assert screen.current_item() is None and screen.stack.currentIndex() == 1
    assert screen.progress_label.text().startswith(f"{n} of {n} rated · ")
    press(qtbot, screen, K.Key_Return)  # nothing to submit; no error
    press(qtbot, screen, K.Key_Left, ALT)
    assert screen.current_item() is not None and screen.current_item().reviewing


def test_keys_win_over_window_shortcuts(qtbot, make_screen, study) -> None:
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QMainWindow

    window = QMainWindow()
    qtbot.addWidget(window)
    fired = []
    for seq in ("Ctrl+Z", "S", "Return"):
        action = QAction(seq, window)
        action.setShortcut(QKeySequence(seq))
        action.triggered.connect(lambda _=False, s=seq: fired.append(s))
        window.addAction(action)
    from meaningbench.ui.annotation.screen import AnnotationScreen

    screen = AnnotationScreen(study, "alice")
    window.setCentralWidget(screen)
    with qtbot.waitActive(window):
        window.show()
        window.activateWindow()
    screen.rows[0].scale.setFocus()
    type_text(qtbot, screen, "5")
    press(qtbot, screen, K.Key_Return)
    press(qtbot, screen, K.Key_S)
    press(qtbot, screen, K.Key_Z, CTRL)
    assert fired == []
    assert [r.state for r in _ratings(study)] == ["undone"]


CHORDS = (CTRL, ALT, Qt.KeyboardModifier.MetaModifier)


def test_a_digit_held_with_ctrl_alt_or_meta_sets_no_value(qtbot, make_screen, study) -> None:
    """Ctrl+3 is a page of the window, never 30: on the slider, on the screen itself (after
    a click on a text) and in a span editor, a chorded digit changes nothing."""
    from meaningbench.annotation.protocols import set_protocol
    from meaningbench.ui.annotation.span_editor import SpanEditor

    screen = make_screen()
    scale = screen.rows[0].scale
    for target in (scale, screen):
        for mod in CHORDS:
            for key in (K.Key_3, K.Key_6, K.Key_9):
                qtbot.keyClick(target, key, mod)
    assert scale.value() is None and not scale.touched()
    assert not screen.submit_button.isEnabled()
    press(qtbot, screen, K.Key_Return)
    assert _ratings(study) == [] and screen.hint.text() == HINT_BLOCKED
    # Shift stays a plain digit (AZERTY types digits with it), and so does the keypad.
    qtbot.keyClick(scale, K.Key_4, SHIFT)
    assert scale.value() == 40
    qtbot.keyClick(scale, K.Key_2, Qt.KeyboardModifier.KeypadModifier)
    assert scale.value() == 42
    screen.close()
    set_protocol(study, "esa")
    esa = make_screen("bo")
    editor = QApplication.focusWidget()
    assert isinstance(editor, SpanEditor)
    for mod in CHORDS:
        qtbot.keyClick(editor, K.Key_1, mod)
    assert editor.spans() == [] and esa.rows[0].scale.value() is None


def test_a_value_set_while_a_notice_shows_enables_submit_and_says_so(
    qtbot, make_screen, study
) -> None:
    """Enter on an unset slider says "Not submitted"; a digit typed within the notice's
    seconds must show the screen ready (Submit enabled, the hint that Enter submits)
    before Enter stores the value."""
    from meaningbench.ui.annotation.screen import HINT_READY

    screen = make_screen()
    press(qtbot, screen, K.Key_Return)
    assert screen.hint.text() == HINT_BLOCKED
    type_text(qtbot, screen, "5")
    assert screen.submit_button.isEnabled() and screen.hint.text() == HINT_READY
    assert screen.rows[0].number.text() == "50"
    press(qtbot, screen, K.Key_Return)
    assert [r.value for r in _ratings(study)] == [50.0]


def _held(key, text: str = "") -> None:
    """An auto-repeated press, as the system sends while a key is held down."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent

    event = QKeyEvent(QEvent.Type.KeyPress, key, Qt.KeyboardModifier.NoModifier, text, True)
    QApplication.sendEvent(QApplication.focusWidget(), event)


def test_a_held_key_types_one_digit_and_submits_nothing_more(qtbot, make_screen, study) -> None:
    screen = make_screen()
    scale = screen.rows[0].scale
    type_text(qtbot, screen, "5")
    _held(K.Key_5, "5")
    _held(K.Key_5, "5")
    assert scale.value() == 50, "a held 5 is one 5, not 55"
    _held(K.Key_Return)
    assert _ratings(study) == [], "Enter's auto-repeat submits nothing"
    item = screen.current_item().item_id
    press(qtbot, screen, K.Key_Return)
    assert [(r.item_id, r.value) for r in _ratings(study)] == [(item, 50.0)]
    _held(K.Key_Right)  # arrows repeat: holding one is how a slider moves far
    assert screen.rows[0].scale.value() == 51
