"""File ▸ Make rater kits… into a folder that already holds the kits: it asks before it
replaces a kit without ratings, and never replaces one that holds ratings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QMessageBox

from meaningbench.db.study import open_study
from meaningbench.kits.campaign import campaign
from tests.fault_tools import file_digest
from tests.kits.campaign_helpers import lead_study, rate_kit


def _dialog(window: Any, lead: Path, out: Path) -> Any:
    assert window.studies.open_path(lead)
    window.actions_.make_kits.trigger()
    dialog = window.findChild(QDialog, "makeKitsDialog")
    dialog.raters_edit.setText("ana")
    dialog.folder_edit.setText(str(out))
    return dialog


def _make(qtbot: Any, dialog: Any) -> None:
    dialog.made = None
    qtbot.mouseClick(dialog.make_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=30_000)


def _answer(qtbot: Any, dialog: Any, button: QMessageBox.StandardButton) -> None:
    box = dialog.replace_box
    assert box is not None and box.isVisible()
    qtbot.mouseClick(box.button(button), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=30_000)


def _kits_sent(lead: Path) -> dict[str, int]:
    study = open_study(lead)
    try:
        return {r.rater: r.kits_sent for r in campaign(study).raters}
    finally:
        study.close()


def test_it_asks_before_it_replaces_a_kit(window: Any, qtbot: Any, tmp_path: Path) -> None:
    lead, out = tmp_path / "lead.mbstudy", tmp_path / "kits"
    lead_study(lead, seed=1).close()
    dialog = _dialog(window, lead, out)
    _make(qtbot, dialog)
    assert dialog.made and "1 kit made" in dialog.result_label.text()
    first = file_digest(out / "ana.mbkit")

    _make(qtbot, dialog)  # again, into the same folder: asked, nothing written yet
    assert dialog.made is None and dialog.replace_box is not None
    assert "ana.mbkit is already in" in dialog.result_label.text()
    assert "--" not in dialog.replace_box.text()  # no command-line flag in a dialog
    assert file_digest(out / "ana.mbkit") == first
    _answer(qtbot, dialog, QMessageBox.StandardButton.No)
    assert dialog.made is None and "Nothing was written" in dialog.result_label.text()
    assert file_digest(out / "ana.mbkit") == first

    _make(qtbot, dialog)
    _answer(qtbot, dialog, QMessageBox.StandardButton.Yes)
    assert dialog.made and file_digest(out / "ana.mbkit") != first
    assert _kits_sent(lead) == {"ana": 1}  # made again: the same round, one kit


def test_a_kit_with_ratings_is_not_offered_for_replacing(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    lead, out = tmp_path / "lead.mbstudy", tmp_path / "kits"
    lead_study(lead, seed=1).close()
    dialog = _dialog(window, lead, out)
    _make(qtbot, dialog)
    rate_kit(out / "ana.mbkit", "ana", 4)
    rated = file_digest(out / "ana.mbkit")

    _make(qtbot, dialog)
    assert dialog.made is None and dialog.replace_box is None
    said = dialog.result_label.text()
    assert "ana.mbkit" in said and "4 ratings" in said and "never replaced" in said
    assert file_digest(out / "ana.mbkit") == rated
