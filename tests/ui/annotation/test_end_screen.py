"""The rater's progress and end screen, offscreen on real study files: the counter
("Item 2 of 12") moves as items are rated and skipped and reads the same on a hidden control
as on any item; after the last item the end screen says what to do next (Send back, and
where the file goes, in a kit; that the queue is done, in the lead's study), and no key on
it changes a rating, while Ctrl+Z undoes the last one as on any item."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from meaningbench.kits.making import make_kits
from meaningbench.ui.annotation.end_screen import LEAD_NEXT
from tests.kits.campaign_helpers import lead_study, rate_kit
from tests.ui.annotation.conftest import press, shown
from tests.ui.conftest import open_in

K = Qt.Key
CTRL = Qt.KeyboardModifier.ControlModifier
COUNTER = re.compile(r"^Item (\d+) of (\d+) · ")


def _rows(path: Path) -> list[tuple[Any, ...]]:
    """Every rating row of the file, as it is: a key that wrote, revised or withdrew
    anything changes this."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT id, item_id, annotator_id, dimension_id, value, state FROM rating ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def _control_ids(path: Path) -> set[int]:
    conn = sqlite3.connect(path)
    try:
        return {i for (i,) in conn.execute("SELECT id FROM item WHERE kind LIKE 'control%'")}
    finally:
        conn.close()


def _rate(qtbot: Any, screen: Any, digits: str = "60") -> None:
    for d in digits:
        press(qtbot, screen, K(K.Key_0 + int(d)))
    press(qtbot, screen, K.Key_Return)


def _press_everything_harmless(qtbot: Any, screen: Any) -> None:
    """Digits, Enter, Space, S and F: the keys that rate, submit, skip and flag an item."""
    for n in range(10):
        press(qtbot, screen, K(K.Key_0 + n))
    for key in (K.Key_Return, K.Key_Enter, K.Key_Space, K.Key_S, K.Key_F, K.Key_Up, K.Key_End):
        press(qtbot, screen, key)


def test_the_counter_moves_as_items_are_rated_and_skipped(qtbot, make_screen) -> None:
    screen = make_screen()
    assert screen.progress_label.text() == "Item 1 of 12 · under 1 min spent"
    _rate(qtbot, screen)
    assert screen.progress_label.text() == "Item 2 of 12 · under 1 min spent"
    press(qtbot, screen, K.Key_S)
    assert screen.progress_label.text() == "Item 2 of 12 · 1 skipped · under 1 min spent"
    _rate(qtbot, screen)
    assert screen.progress_label.text() == "Item 3 of 12 · 1 skipped · under 1 min spent"
    press(qtbot, screen, K.Key_Left, Qt.KeyboardModifier.AltModifier)  # back to revise
    assert (
        screen.progress_label.text() == "Revising · 2 of 12 rated · 1 skipped · under 1 min spent"
    )
    assert "rating time" not in screen.progress_label.text()
    assert "on screen" in screen.progress_label.toolTip()  # what the time counts


def test_the_end_screen_in_the_leads_study_takes_no_rating_and_undo_still_works(
    qtbot, make_screen, study
) -> None:
    screen = make_screen()
    for _ in range(11):
        _rate(qtbot, screen)
    assert screen.progress_label.text().startswith("Item 12 of 12 · ")
    with qtbot.waitSignal(screen.finished):
        _rate(qtbot, screen, "35")
    end = screen.end_screen
    assert screen.current_item() is None and screen.stack.currentWidget() is end
    assert end.isVisible() and not end.send_back_button.isVisible()
    assert end.next_step.text() == LEAD_NEXT
    assert end.summary.text().startswith("You rated every one of the 12 items in your queue, in ")
    assert screen.progress_label.text().startswith("12 of 12 rated · ")
    before = _rows(study.path)
    _press_everything_harmless(qtbot, screen)
    assert _rows(study.path) == before and screen.current_item() is None
    # Ctrl+Z undoes the last rating, as on any item: the item is open again, unrated.
    press(qtbot, screen, K.Key_Z, CTRL)
    item = screen.current_item()
    assert item is not None and not item.reviewing
    assert [r[5] for r in _rows(study.path) if r[1] == item.item_id] == ["undone"]
    assert screen.progress_label.text().startswith("Item 12 of 12 · ")
    _rate(qtbot, screen, "80")
    assert screen.stack.currentWidget() is end


def test_the_counter_reads_alike_on_controls_and_regular_items(qtbot, study_with_facts) -> None:
    from meaningbench.db.study import open_study
    from meaningbench.ui.annotation.screen import AnnotationScreen

    path, _facts = study_with_facts
    study = open_study(path)
    try:
        screen = shown(qtbot, AnnotationScreen(study, "cara"))
        total = screen.queue.progress().total
        controls = _control_ids(path)  # what the lead's study knows, and the rater never sees
        shapes: dict[bool, set[str]] = {True: set(), False: set()}
        n = 0
        while (item := screen.current_item()) is not None:
            n += 1
            text = screen.progress_label.text()
            match = COUNTER.match(text)
            assert match is not None and match.groups() == (str(n), str(total)), text
            shapes[item.item_id in controls].add(COUNTER.sub("", text))
            _rate(qtbot, screen, "7")
        assert n == total and shapes[True], "the queue held controls"
        assert shapes[True] == shapes[False] == {"under 1 min spent"}
        screen.close()
    finally:
        study.close()


def test_a_kits_end_screen_offers_send_back_and_says_where_the_file_goes(
    window, qtbot, tmp_path: Path
) -> None:
    lead = lead_study(tmp_path / "lead.mbstudy", seed=1, n_sources=2)
    kit = make_kits(lead, ["ana", "ben"], tmp_path / "kits")[0].path
    lead.close()
    window.show()
    open_in(window, kit, qtbot)
    screen = window.page("annotate").screen
    total = screen.queue.progress().total
    window.studies.close_study()
    rate_kit(kit, "ana", limit=total - 1)
    open_in(window, kit, qtbot)
    screen = window.page("annotate").screen
    assert screen.progress_label.text().startswith(f"Item {total} of {total} · ")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
    _rate(qtbot, screen, "55")
    end = screen.end_screen
    assert end.isVisible() and end.send_back_button.isVisible()
    folder = kit.parent / "Send back"
    assert f"a copy of this kit, {kit.name}, with every rating in it, into this folder" in (
        end.next_step.text()
    )
    shown_folder = re.sub("<[^>]+>", "", end.folder_label.text()).replace("\u200b", "")
    assert shown_folder == str(folder) and end.hand_over.isVisible()
    before = _rows(kit)
    _press_everything_harmless(qtbot, screen)
    assert _rows(kit) == before
    assert window.rater_mode.dialog is None  # no key opened Send back
    qtbot.mouseClick(end.send_back_button, Qt.MouseButton.LeftButton)
    dialog = window.rater_mode.dialog
    assert dialog is not None and dialog.isVisible()
    assert Path(dialog.folder_edit.text()) == folder
    assert f"with your {total} ratings" in dialog.intro.text()
    dialog.close()
    assert _rows(kit) == before
    # Undo from the end screen, as before: the last item is open again.
    screen.setFocus()
    press(qtbot, screen, K.Key_Z, CTRL)
    assert screen.current_item() is not None
    assert len([r for r in _rows(kit) if r[5] == "current"]) == len(before) - 1
    assert QApplication.focusWidget() is not None


def test_the_leads_own_queue_done_says_so_on_the_annotate_page(window, qtbot, study) -> None:
    window.show()
    open_in(window, study.path, qtbot)
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert page.start("lea")
    screen = page.screen
    assert not screen.end_screen.send_back_button.isVisibleTo(screen)
    for _ in range(11):
        _rate(qtbot, screen)
    before = _rows(study.path)
    _rate(qtbot, screen, "42")
    assert len(_rows(study.path)) == len(before) + 1
    assert page.screen is None and page.stack.currentWidget() is page.intro
    assert page.message.text() == (
        "lea has rated every item in their queue (under 1 min of rating time). Thank you! "
        "Their queue is done: choose another annotator to go on."
    )


def test_a_long_counter_never_widens_the_screen(qtbot, make_screen) -> None:
    """The counter at its longest keeps the screen as narrow as a short one: a 1024 px
    laptop's window is not pushed wider; the tooltip says the count whole."""
    screen = make_screen()
    short = screen.minimumSizeHint().width()
    long_text = "Revising · 10000 of 12500 rated · 3 skipped · 123 h 05 min spent"
    screen.progress_label.setText(long_text)
    screen.saved_label.setText("Saved ✓ 23:59:59")
    assert screen.minimumSizeHint().width() <= short
    assert screen.progress_label.toolTip().startswith("Item 1 of 12 · ")


def test_the_counter_and_saved_stamp_show_whole_on_a_laptop(qtbot, make_screen) -> None:
    """On a 1024 px laptop the screen beside the navigation is about 880 px wide: the
    progress bar gives way before the counter or the saved stamp is cut."""
    screen = make_screen()
    screen.resize(888, 600)  # a 1024 px window less the navigation
    _rate(qtbot, screen)
    # Longer ones (hours and skips with three-digit counts) may be cut there by a few
    # pixels: the tooltip says them whole (the test above).
    screen.progress_label.setText("Item 37 of 119 · 1 skipped · 42 min spent")
    qtbot.wait(50)
    for label in (screen.progress_label, screen.saved_label):
        assert label.width() >= label.sizeHint().width(), label.text()
    assert screen.progress_bar.isVisible() and screen.progress_bar.width() >= 24


def test_side_by_side_counts_outputs_and_ends_on_the_end_screen(qtbot, make_sxs, study) -> None:
    from tests.ui.annotation.conftest import type_text

    screen = make_sxs()
    rated = 0
    while (unit := screen.current_unit()) is not None:
        n = len(unit.item_ids)
        assert screen.progress_label.text().startswith(f"Outputs {rated + 1}–{rated + n} of 12 · ")
        assert not screen.end_screen.isVisible()
        for i in range(n):
            if i:
                press(qtbot, screen, K.Key_Tab)
            type_text(qtbot, screen, "5")
        press(qtbot, screen, K.Key_Return)
        rated += n
    assert rated == 12 and screen.end_screen.isVisible()
    assert screen.end_screen.summary.text().startswith("You rated every one of the 12 outputs")
    before = _rows(study.path)
    _press_everything_harmless(qtbot, screen)
    assert _rows(study.path) == before
