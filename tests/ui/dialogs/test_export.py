"""The export dialog: spreadsheet-safe text cells unless told otherwise, and it says which."""

from __future__ import annotations

import csv
from pathlib import Path

from meaningbench.core.cells import notice_path
from tests.ui.dialogs.test_import_file import write_csv

ROWS = [
    ['=HYPERLINK("http://example.invalid","x")', "+1 output", "r1", "meaning", 80],
    ["@SUM(A1)", "Plain output.", "r1", "meaning", 60],
]
HEADER = ["source", "output", "annotator", "dimension", "rating"]


def _export(window, qtbot, out: Path, raw: bool):  # noqa: ANN001, ANN202
    dialog = window.show_export_dialog()
    dialog.ratings_radio.setChecked(True)
    dialog.raw_cells.setChecked(raw)
    dialog.path_edit.setText(str(out))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    with out.open(encoding="utf-8", newline="") as fh:
        return dialog, list(csv.reader(fh))


def test_export_dialog_writes_safe_cells_by_default_and_raw_when_ticked(
    window, qtbot, tmp_path: Path
) -> None:
    assert window.studies.create_path(tmp_path / "s.mbstudy")
    dialog = window.show_import_dialog()
    dialog.set_file(write_csv(tmp_path / "in.csv", HEADER, ROWS))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    dialog.close()

    assert not window.show_export_dialog().raw_cells.isChecked()  # safe unless asked
    export, table = _export(window, qtbot, tmp_path / "safe.csv", raw=False)
    assert notice_path(tmp_path / "safe.csv").is_file()  # the table itself stays clean
    sources = sorted(r[table[0].index("source")] for r in table[1:])
    assert sources == sorted(["'" + ROWS[0][0], "'" + ROWS[1][0]])
    assert "Text cells: spreadsheet-safe: 3 text cells" in export.status.text()
    export.close()

    export, table = _export(window, qtbot, tmp_path / "raw.csv", raw=True)
    assert not notice_path(tmp_path / "raw.csv").exists()
    assert sorted(r[table[0].index("source")] for r in table[1:]) == sorted(
        [ROWS[0][0], ROWS[1][0]]
    )
    assert "Text cells: text as it is (raw cells" in export.status.text()
