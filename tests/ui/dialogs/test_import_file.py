"""The import dialog: preview, column mapping, a good import, a bad file left out entirely."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

from tests.ui.test_workers import error_boxes


def count(path: Path, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


LONG_ROWS = [
    ["The cat sat on the mat.", "A cat sat.", "sysA", "r1", "meaning", 80],
    ["The cat sat on the mat.", "A cat sat.", "sysA", "r2", "meaning", 70],
    ["Dogs bark at night.", "Dogs bark.", "sysA", "r1", "meaning", 90],
    ["Dogs bark at night.", "Dogs are loud at night.", "sysB", "r1", "meaning", 60],
    ["Rain fell all day long.", "It rained.", "sysB", "r2", "meaning", 75],
]
LONG_HEADER = ["source", "output", "system", "annotator", "aspect", "rating"]


def new_study_window(window, tmp_path: Path):  # noqa: ANN001, ANN201
    assert window.studies.create_path(tmp_path / "target.mbstudy")
    return window.show_import_dialog()


def test_preview_and_a_good_import(window, qtbot, tmp_path: Path) -> None:
    data = write_csv(tmp_path / "ratings.csv", LONG_HEADER, LONG_ROWS)
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(data)
    p = dialog.preview
    assert p is not None and p.error is None
    assert p.columns == LONG_HEADER and p.shape == "long" and p.container == "csv"
    assert dialog.table.rowCount() == len(LONG_ROWS)
    assert dialog.table.item(3, 1).text() == "Dogs are loud at night."
    header = dialog.table.horizontalHeaderItem(4).text()
    assert header == "aspect\n→ dimension"
    assert "long shape" in dialog.plan_label.text()
    assert dialog.import_button.isEnabled()
    dialog.dataset_edit.setText("pilot")
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    study_path = window.context.path
    assert count(study_path, "item") == 4  # (source, output, system) groups rows into items
    assert count(study_path, "rating") == 5
    assert dialog.report.items_created == 4 and dialog.report.ratings_added == 5
    assert "items created:        4" in dialog.report_view.toPlainText()
    page = window.page("browser")
    qtbot.waitUntil(lambda: page.model.rowCount() == 4, timeout=10_000)
    assert page.dataset_combo.findData("pilot") > 0
    assert "4 items" in window.status.counts_label.text() or window._counts_timer.isActive()


def test_a_bad_row_is_reported_with_row_and_column_and_nothing_changes(
    window, qtbot, tmp_path: Path
) -> None:
    rows = [list(r) for r in LONG_ROWS]
    rows[2][5] = "ninety"  # data row 3 = file row 4 (the header is row 1)
    data = write_csv(tmp_path / "bad.csv", LONG_HEADER, rows)
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(data)
    assert dialog.preview.error is None  # the header and plan are fine
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "failed" and job.failure.is_user_error
    message = dialog.error_label.text()
    assert dialog.error_label.isVisible()
    assert "Nothing was imported" in message
    assert "row 4" in message and "'rating'" in message
    assert not error_boxes()  # shown in the dialog, not as a pop-up
    study_path = window.context.path
    assert count(study_path, "item") == 0 and count(study_path, "rating") == 0
    assert count(study_path, "dataset") == 0


def test_a_file_that_is_not_text_is_refused_at_once(window, qtbot, tmp_path: Path) -> None:
    xlsx = tmp_path / "sheet.csv"
    xlsx.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(xlsx)
    assert dialog.preview.error is not None
    assert "ZIP" in dialog.error_label.text() or "Excel" in dialog.error_label.text()
    assert not dialog.import_button.isEnabled()


def test_the_mapping_editor_names_columns_detection_cannot(window, qtbot, tmp_path: Path) -> None:
    data = write_csv(
        tmp_path / "odd.csv",
        ["complex_text", "easy_text", "mean"],
        [["A long sentence here.", "A sentence.", 55], ["Another one.", "One.", 65]],
    )
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(data)
    assert dialog.preview.error is not None
    assert "row 1" in dialog.error_label.text()  # no source column: said at the header
    assert not dialog.import_button.isEnabled()
    combos = dialog.field_combos
    combos["source"].setCurrentIndex(combos["source"].findData("complex_text"))
    combos["output"].setCurrentIndex(combos["output"].findData("easy_text"))
    combos["label"].setCurrentIndex(combos["label"].findData("mean"))
    dialog.refresh_preview()
    assert dialog.preview.error is None, dialog.preview.error
    assert not dialog.error_label.isVisible()
    assert dialog.preview.field_of() == {
        "complex_text": "source",
        "easy_text": "output",
        "mean": "meaning (label)",
    }
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    conn = sqlite3.connect(window.context.path)
    values = sorted(v for (v,) in conn.execute("SELECT value FROM rating"))
    conn.close()
    assert values == [55.0, 65.0]


def test_csmd_from_the_shared_data(window, qtbot, tmp_path: Path, shared_datasets) -> None:
    dev = shared_datasets / "csmd" / "dev.tsv"
    with dev.open(encoding="utf-8", newline="") as fh:
        n_rows = sum(1 for _ in csv.reader(fh, delimiter="\t")) - 1
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(dev)
    assert dialog.preview.shape == "csmd" and dialog.preview.container == "tsv"
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    assert dialog.report.rows_read == n_rows
    assert count(window.context.path, "rating") == dialog.report.ratings_added > 0


def test_export_items_and_ratings(window, qtbot, tmp_path: Path, study_with_facts) -> None:
    from tests.ui.conftest import open_in

    path, facts = study_with_facts
    open_in(window, path, qtbot)
    dialog = window.show_export_dialog()
    out = tmp_path / "items.csv"
    dialog.path_edit.setText(str(out))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    with out.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {int(r["item_id"]) for r in rows} >= set(facts.item_ids)
    assert "bleu[refs=source]" in rows[0]
    assert f"{len(rows):,} rows" in dialog.status.text()
    dialog.ratings_radio.setChecked(True)
    ratings_out = tmp_path / "ratings.jsonl"
    dialog.path_edit.setText(str(ratings_out))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    assert ratings_out.read_text(encoding="utf-8").count("\n") == dialog.report.rows
    # A bad extension is the user's to fix: a message, no traceback.
    dialog.path_edit.setText(str(tmp_path / "out.xlsx"))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "failed" and "extension" in dialog.status.text()
    for box in error_boxes():
        box.close()


def test_the_kind_of_ratings_is_shown_and_can_be_chosen(window, qtbot, tmp_path: Path) -> None:
    # No rater column: each row is one rating by an unknown person; rows 2 and 3 agree.
    rows = [[s, o, sy, a, v] for s, o, sy, _r, a, v in LONG_ROWS]
    rows.insert(1, list(rows[0]))
    data = write_csv(
        tmp_path / "anon.csv", ["source", "output", "system", "aspect", "rating"], rows
    )
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(data)
    assert dialog.preview.rating_kind == "anonymous"
    assert "Ratings (inferred): per-rater (anonymous)" in dialog.plan_label.text()

    # Said to be aggregates, a file where most items have several rows is refused (one
    # rule with the inferred kind; a few repeated items would be kept with a warning).
    many = write_csv(tmp_path / "many.csv", LONG_HEADER[:3] + LONG_HEADER[4:], rows + rows)
    dialog.set_file(many)
    dialog.ratings_combo.setCurrentIndex(dialog.ratings_combo.findData("aggregate"))
    dialog.refresh_preview()
    assert "Ratings (as chosen): aggregate" in dialog.plan_label.text()
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "failed" and job.failure.is_user_error
    assert "4 of 4 labelled items have several rows" in dialog.error_label.text()
    assert count(window.context.path, "rating") == 0
    dialog.set_file(data)

    dialog.ratings_combo.setCurrentIndex(0)
    dialog.refresh_preview()
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    assert count(window.context.path, "rating") == len(rows)
    text = dialog.report_view.toPlainText()
    assert f"per-rater (anonymous): {len(rows)} rating rows, {len(rows)} ratings stored" in text


def test_enter_in_the_file_field_previews_and_imports_nothing(
    window, qtbot, tmp_path: Path
) -> None:
    from PySide6.QtCore import Qt

    data = write_csv(tmp_path / "ratings.csv", LONG_HEADER, LONG_ROWS)
    dialog = new_study_window(window, tmp_path)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.path_edit.setFocus()
    dialog.path_edit.setText(str(data))
    qtbot.keyClick(dialog.path_edit, Qt.Key.Key_Return)
    qtbot.wait(200)
    assert dialog.preview is not None and dialog.preview.shape == "long"
    assert dialog.table.rowCount() == len(LONG_ROWS)
    assert dialog.job is None and dialog.report is None  # no import began
    assert count(window.context.path, "rating") == 0
    assert dialog.isVisible() and dialog.import_button.isEnabled()


def test_the_import_summary_names_the_dialogs_control_not_a_flag(
    window, qtbot, tmp_path: Path
) -> None:
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(write_csv(tmp_path / "ratings.csv", LONG_HEADER, LONG_ROWS))
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    summary = dialog.report_view.toPlainText()
    assert "ratings are:" in summary and "inferred" in summary
    assert "--" not in summary
    assert "the Ratings choice above" in summary
