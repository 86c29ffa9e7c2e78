"""The import dialog's language: the study's own is proposed, the one chosen is stored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.ui.dialogs.test_import_file import count, new_study_window, write_csv

ROWS = [
    ["Der Hund schläft im Garten.", "Der Hund schläft.", "a"],
    ["Die Straße ist sehr lang.", "Die Straße ist lang.", "a"],
]


def _language(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT value FROM study_setting WHERE key='language'").fetchone()
    finally:
        conn.close()
    return str(json.loads(row[0]))


def test_the_chosen_language_is_stored_and_proposed_next_time(
    window, qtbot, tmp_path: Path
) -> None:
    data = write_csv(tmp_path / "de.csv", ["source", "output", "system"], ROWS)
    dialog = new_study_window(window, tmp_path)
    assert dialog.language_combo.currentData() == "en"
    assert dialog.language_combo.currentText() == "English (en)"
    dialog.set_file(data)
    dialog.language_combo.setCurrentIndex(dialog.language_combo.findData("de"))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    study_path = window.context.path
    assert _language(study_path) == "de"
    assert "study language:       de (German)" in dialog.report_view.toPlainText()
    dialog.close()
    again = window.show_import_dialog()
    assert again.language_combo.currentData() == "de"


def test_another_language_for_a_study_with_items_imports_nothing(
    window, qtbot, tmp_path: Path
) -> None:
    data = write_csv(tmp_path / "de.csv", ["source", "output", "system"], ROWS)
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(data)
    job = dialog.start()  # English, the default
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    study_path = window.context.path
    more = write_csv(
        tmp_path / "more.csv", ["source", "output", "system"], [["Ein Satz.", "Satz.", "b"]]
    )
    dialog.set_file(more)
    dialog.language_combo.setCurrentIndex(dialog.language_combo.findData("de"))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome != "done"
    assert "holds en (English) texts already" in dialog.error_label.text()
    assert count(study_path, "item") == 2 and _language(study_path) == "en"
