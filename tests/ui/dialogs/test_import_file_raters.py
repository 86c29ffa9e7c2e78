"""The import dialog's answer for raters already in the study from another file: refused
by name, then the same people or their own ids, as the command line's flags do."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.ui.dialogs.test_import_file import new_study_window, write_csv

COLUMNS = ["source", "output", "annotator", "meaning"]


def _raters(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM annotator WHERE kind = 'named'")]
    finally:
        conn.close()


def _run(dialog, qtbot, data: Path, choice: str):
    dialog.set_file(data)
    dialog.raters_combo.setCurrentIndex(dialog.raters_combo.findData(choice))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    return job


def test_raters_met_again_are_asked_about(window, qtbot, tmp_path: Path) -> None:
    first = write_csv(tmp_path / "simpda.csv", COLUMNS, [["S.", "O.", "0", "70"]])
    second = write_csv(tmp_path / "asset.csv", COLUMNS, [["T.", "P.", "0", "20"]])
    dialog = new_study_window(window, tmp_path)
    assert dialog.raters_combo.currentData() == "ask"
    assert _run(dialog, qtbot, first, "ask").outcome == "done"
    study = window.context.path
    job = _run(dialog, qtbot, second, "ask")
    assert job.outcome != "done"
    said = dialog.error_label.text()
    assert "already rated in the study, imported from simpda.csv" in said
    assert "“Raters already in the study: Are the same people”" in said and "--" not in said
    assert _raters(study) == ["0"]
    assert _run(dialog, qtbot, second, "own").outcome == "done"
    assert sorted(_raters(study)) == ["0", "asset:0"]
    third = write_csv(tmp_path / "more.csv", COLUMNS, [["U.", "Q.", "0", "40"]])
    assert _run(dialog, qtbot, third, "same").outcome == "done"
    assert sorted(_raters(study)) == ["0", "asset:0"]
