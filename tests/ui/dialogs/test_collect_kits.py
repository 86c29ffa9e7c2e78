"""File ▸ Collect rater kits…: the report counts the ratings written, and the dialog opens
fresh each time (never with the last collect's result)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from meaningbench.cli import main
from meaningbench.db.study import copy_study
from tests.kits.campaign_helpers import FORGE_FIRST_RATING, lead_study, rate_kit


def _returned(tmp_path: Path) -> tuple[Path, Path]:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1, n_sources=8).close()
    assert main(["kit", str(lead), "--raters", "ana,ben", "--out", str(tmp_path / "made")]) == 0
    back = tmp_path / "back"
    back.mkdir()
    for rater in ("ana", "ben"):
        rate_kit(tmp_path / "made" / f"{rater}.mbkit", rater, 3)
        copy_study(tmp_path / "made" / f"{rater}.mbkit", back / f"{rater}.mbkit")
    conn = sqlite3.connect(str(back / "ben.mbkit"))  # ben's value edited outside the app
    with conn:
        conn.execute(FORGE_FIRST_RATING)
    conn.close()
    return lead, back


def _open(window: Any) -> Any:
    window.actions_.collect_kits.trigger()
    dialog = window.findChild(QDialog, "collectKitsDialog")
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_the_dialog_reports_rows_written_and_reopens_fresh(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    lead, back = _returned(tmp_path)
    assert window.studies.open_path(lead)
    dialog = _open(window)
    dialog.folder_edit.setText(str(back))
    qtbot.mouseClick(dialog.collect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.report is not None, timeout=60_000)
    assert "3 new ratings</b> from 1 kit" in dialog.result_label.text()
    assert "ben.mbkit" in dialog.refused.text() and "changed outside" in dialog.refused.text()
    assert dialog.table.rowCount() == 1 and dialog.table.item(0, 2).text() == "3"

    dialog.close()
    again = _open(window)
    assert again is dialog  # the same window, shown again: without the last result
    assert dialog.report is None
    assert not dialog.result_label.isVisible() and not dialog.result_label.text()
    assert not dialog.table.isVisible() and dialog.table.rowCount() == 0
    assert not dialog.refused.isVisible()
    assert dialog.folder_edit.text() == str(back)  # the folder chosen stays
