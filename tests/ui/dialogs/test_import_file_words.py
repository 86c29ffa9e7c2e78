"""The import dialog speaks its own language: its row numbers are the ones errors give,
and its errors name the dialog's controls, never a command-line flag."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from tests.ui.dialogs.test_import_file import LONG_HEADER, LONG_ROWS, new_study_window, write_csv


def run_import(dialog, qtbot) -> None:  # noqa: ANN001
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: dialog.error_label.isVisible() or dialog.report is not None, timeout=60_000
    )


def test_preview_row_numbers_match_the_error_message(window, qtbot, tmp_path: Path) -> None:
    rows = [list(r) for r in LONG_ROWS]
    rows[2][5] = "ninety"  # the third data row: row 4 of the file
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(write_csv(tmp_path / "bad.csv", LONG_HEADER, rows))
    run_import(dialog, qtbot)
    assert "row 4" in dialog.error_label.text()
    shown = next(
        r for r in range(dialog.table.rowCount()) if dialog.table.item(r, 5).text() == "ninety"
    )
    assert dialog.table.verticalHeaderItem(shown).text() == "4"


def test_errors_in_the_dialog_name_its_controls_not_flags(window, qtbot, tmp_path: Path) -> None:
    rows = [list(r) for r in LONG_ROWS]
    rows[1][3] = ""  # one row without its rater while the others name theirs
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(write_csv(tmp_path / "norater.csv", LONG_HEADER, rows))
    run_import(dialog, qtbot)
    message = dialog.error_label.text()
    assert "rater id is empty" in message
    assert "--" not in message
    assert "“Ratings: Per rater, anonymous”" in message
