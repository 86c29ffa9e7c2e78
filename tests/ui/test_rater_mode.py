"""Rater mode's edges: a kit given on the command line opens in it, the lead's shortcuts are
gone with their menus, Send back refuses the kit's own folder and says why, and a study
opened after a kit has every page back."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from meaningbench.db.study import open_study
from meaningbench.kits.making import make_kits
from meaningbench.queries.rater_kit import kit_ratings
from meaningbench.ui.launch import open_initial_study
from meaningbench.ui.menus import shortcut_rows
from tests.kits.campaign_helpers import lead_study, rate_kit


def _kits(tmp_path: Path) -> tuple[Path, Path]:
    lead = lead_study(tmp_path / "lead.mbstudy", seed=1, n_sources=2)
    made = make_kits(lead, ["ana", "ben"], tmp_path / "kits")
    lead.close()
    return tmp_path / "lead.mbstudy", made[0].path


def test_a_kit_from_the_command_line_opens_in_rater_mode(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    lead, kit = _kits(tmp_path)
    open_initial_study(window, str(kit))  # `meaningbench gui ana.mbkit`, or a double-click
    assert window.rater_mode.rater == "ana"
    assert window.current_page() == "annotate"
    page = window.page("annotate")
    assert page.screen is not None and page.screen.queue.annotator_name == "ana"
    assert "ana" in window.windowTitle()
    # Page shortcuts (Ctrl+1…) and the lead's actions are off, and the keymap leaves them out.
    for key, slot in window.slots().items():
        assert slot.action.isEnabled() == (key == "annotate"), key
    listed = {what for what, _keys in shortcut_rows(window.actions_)}
    assert not listed & {"Study settings", "Run metrics", "Import", "Export", "Annotate"}
    assert "Keyboard shortcuts" in listed
    # No study counts for a rater: items against the queue's length would tell how many
    # hidden control items it holds.
    assert window.status.counts_label.text() == ""

    # Another study opened after the kit: the lead's window again.
    assert window.studies.open_path(lead)
    assert not window.rater_mode.active
    assert "items" in window.status.counts_label.text()
    assert all(not s.nav_item.isHidden() for s in window.slots().values())
    assert window.slots()["annotate"].action.text() == window.slots()["annotate"].spec.title
    assert window.actions_.settings.isVisible() and window.actions_.settings.isEnabled()
    assert not window.actions_.send_back.isVisible()
    assert window.page("annotate").start_button.text() == "Choose annotator and start"


def test_send_back_refuses_the_kits_own_folder_and_says_where_it_went(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    _lead, kit = _kits(tmp_path)
    rate_kit(kit, "ana", limit=2)
    assert window.studies.open_path(kit)
    dialog = window.rater_mode.send_back()
    assert dialog is not None and "with your 2 ratings" in dialog.intro.text()
    # The default: a folder beside the kit, never the kit itself.
    assert Path(dialog.folder_edit.text()) == kit.parent / "Send back"
    dialog.folder_edit.setText(str(kit.parent))
    qtbot.mouseClick(dialog.send_button, Qt.MouseButton.LeftButton)
    assert dialog.sent is None
    assert "is the folder the kit is opened from" in dialog.result_label.text()
    dialog.folder_edit.setText(str(kit.parent / "Send back"))
    qtbot.mouseClick(dialog.send_button, Qt.MouseButton.LeftButton)
    returned = kit.parent / "Send back" / kit.name
    assert dialog.sent is not None and dialog.sent.path == returned
    assert str(returned) in dialog.result_label.text()
    window.studies.close_study()
    copy = open_study(returned)  # a whole study file, with the ratings in it
    try:
        assert kit_ratings(copy) == 2
    finally:
        copy.close()


def test_ctrl_digits_set_no_value_in_rater_mode_and_help_lists_no_lead_pages(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    """The lead's page keys (Ctrl+1…Ctrl+9) are off in a kit: on the rating screen they set
    no value (Ctrl+3 was 30, Ctrl+3 Ctrl+6 36, stored by Enter); Help ▸ Keyboard shortcuts,
    opened before the kit and again in it, lists only what the rater has."""
    from PySide6.QtWidgets import QApplication

    from meaningbench.ui.annotation.scales import RatingScale
    from meaningbench.ui.annotation.screen import HINT_BLOCKED
    from meaningbench.ui.dialogs.help import keymap_rows

    lead, kit = _kits(tmp_path)
    window.show()
    lead_keys = window.show_keymap()
    assert "Go to Browser" in {what for _s, what, _k in keymap_rows(window.actions_)}
    lead_keys.close()
    assert window.studies.open_path(kit)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10_000)
    screen = window.page("annotate").screen
    scale = QApplication.focusWidget()
    assert isinstance(scale, RatingScale) and scale is screen.rows[0].scale
    for number in (*range(1, 10), 3, 6):
        qtbot.keyClick(
            QApplication.focusWidget(),
            Qt.Key(Qt.Key.Key_0 + number),
            Qt.KeyboardModifier.ControlModifier,
        )
    assert window.current_page() == "annotate" and QApplication.focusWidget() is scale
    assert scale.value() is None and not screen.submit_button.isEnabled()
    qtbot.keyClick(scale, Qt.Key.Key_Return)
    assert screen.hint.text() == HINT_BLOCKED
    window.studies.close_study()
    study = open_study(kit)
    try:
        assert kit_ratings(study) == 0
    finally:
        study.close()
    assert window.studies.open_path(kit)
    dialog = window.show_keymap()
    assert dialog is lead_keys, "the window keeps the dialog: it must read the keys again"
    listed = {what for _s, what, _k in keymap_rows(window.actions_)}
    shown = {dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())}
    lead_pages = {f"Go to {s.spec.title}" for k, s in window.slots().items() if k != "annotate"}
    assert lead_pages and not (listed | shown) & lead_pages
    assert "Keyboard shortcuts" in shown and "Go to Rate" in shown


def test_enter_sends_back_the_second_time_too(window: Any, qtbot: Any, tmp_path: Path) -> None:
    """Send back, Close, then Send back again: Enter sends (Close, clicked the first time,
    must not have become the default button)."""
    from PySide6.QtWidgets import QApplication, QDialogButtonBox

    _lead, kit = _kits(tmp_path)
    rate_kit(kit, "ana", limit=1)
    window.show()
    assert window.studies.open_path(kit)
    folder = tmp_path / "returned"
    for _round in range(2):
        dialog = window.rater_mode.send_back()
        assert dialog is not None
        qtbot.waitExposed(dialog)
        dialog.activateWindow()
        qtbot.waitUntil(dialog.isActiveWindow, timeout=10_000)
        dialog.folder_edit.setText(str(folder))
        dialog.sent = None
        assert dialog.send_button.isDefault()
        qtbot.keyClick(QApplication.focusWidget() or dialog, Qt.Key.Key_Return)
        assert dialog.sent is not None and dialog.sent.path == folder / kit.name
        assert dialog.isVisible(), "Enter sent back; the dialog stays to say where"
        close = dialog.buttons.button(QDialogButtonBox.StandardButton.Close)
        qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
        assert not dialog.isVisible()


def test_the_quit_summary_shows_all_of_its_text(window: Any, qtbot: Any, tmp_path: Path) -> None:
    """The box a rater sees on quit ends with how to send the ratings back: every line of it
    shows, in the box (its first and last lines were cut)."""
    from PySide6.QtWidgets import QApplication, QLabel

    _lead, kit = _kits(tmp_path)
    window.show()
    assert window.studies.open_path(kit)
    page = window.page("annotate")
    for digits in ("40", "70"):
        qtbot.keyClicks(QApplication.focusWidget(), digits)
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    window.close()
    box = page.summary_dialog
    assert box is not None
    qtbot.waitExposed(box)
    label = box.findChild(QLabel, "quitSummaryText")
    assert label.text().startswith("ana: 2 ratings saved to ana.mbkit")
    assert label.text().endswith("choose Send back to return your ratings.")
    assert box.rect().contains(label.geometry())
    assert label.heightForWidth(label.width()) <= label.height()
    box.close()


@contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """The file made read-only for this process: by its mode, or, for root (whom modes do
    not stop), by the immutable attribute; skipped where neither holds."""
    mode = path.stat().st_mode
    path.chmod(0o444)
    immutable = False
    if os.access(path, os.W_OK):
        chattr = shutil.which("chattr")
        immutable = chattr is not None and subprocess.run([chattr, "+i", str(path)]).returncode == 0
        if not immutable or os.access(path, os.W_OK):
            path.chmod(mode)
            pytest.skip("cannot make a file read-only for this user here")
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


def test_a_kit_that_cannot_be_written_offers_no_start(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    _lead, kit = _kits(tmp_path)
    window.show()
    with _read_only(kit):
        assert window.studies.open_path(kit)
        page = window.page("annotate")
        assert window.rater_mode.rater == "ana" and window.context.study.read_only
        assert page.screen is None and page.practice is None
        assert "cannot be rated where it is" in page.message.text()
        window.show_page("annotate")
        assert not page.start_button.isVisible(), "Start rating in a file that takes no rating"
        assert not page.start()
        assert "cannot be rated where it is" in page.message.text()
        window.studies.close_study()
    assert window.studies.open_path(kit)  # writable again: rated as any kit
    assert window.page("annotate").screen is not None
