"""The browser's category filter and the import dialog's attribute columns, in the window."""

from __future__ import annotations

from pathlib import Path

from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study
from tests.datasets.helpers import write
from tests.ui.conftest import open_in
from tests.ui.dialogs.test_import_file import new_study_window

ROWS = """\
source,output,system,rater,aspect,rating,sentence_type
The cat sat on the mat.,A cat sat.,lens,r1,meaning,80,paraphrase
The cat sat on the mat.,The cat sat. It was on a mat.,muss,r1,meaning,90,splitting
Dogs bark at night.,Dogs bark.,lens,r1,meaning,60,deletion
Rain fell all day.,It rained.,muss,r2,meaning,75,paraphrase
"""


def test_the_category_combo_filters_the_table(window, qtbot, tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    import_file(study, write(tmp_path / "rows.csv", ROWS))
    study.close()
    open_in(window, tmp_path / "s.mbstudy", qtbot)
    page = window.page("browser")
    combo = page.attribute_combo
    assert combo.isVisibleTo(page)
    labels = [combo.itemText(i) for i in range(combo.count())]
    assert labels == [
        "All categories",
        "sentence_type: paraphrase (2)",
        "sentence_type: deletion (1)",
        "sentence_type: splitting (1)",
    ]
    combo.setCurrentIndex(1)
    qtbot.waitUntil(lambda: not page.model.loading and page.model.rowCount() == 2, timeout=10_000)
    col = page.model.column_of("output")
    outputs = {page.model.data(page.model.index(r, col)) for r in range(page.model.rowCount())}
    assert outputs == {"A cat sat.", "It rained."}
    assert page.count_label.text() == "2 items"
    # A reload (new data) keeps the chosen category.
    page.reload_all()
    qtbot.waitUntil(lambda: not page.model.loading, timeout=10_000)
    assert combo.currentIndex() == 1 and page.model.rowCount() == 2
    combo.setCurrentIndex(0)
    qtbot.waitUntil(lambda: not page.model.loading and page.model.rowCount() == 4, timeout=10_000)


def test_no_attributes_no_combo(window, qtbot, study_with_facts) -> None:
    path, _facts = study_with_facts
    open_in(window, path, qtbot)
    assert not window.page("browser").attribute_combo.isVisibleTo(window.page("browser"))


def test_the_import_dialog_shows_and_keeps_attribute_columns(window, qtbot, tmp_path: Path) -> None:
    data = write(tmp_path / "rows.csv", ROWS)
    dialog = new_study_window(window, tmp_path)
    dialog.set_file(data)
    p = dialog.preview
    assert p is not None and p.error is None and p.attributes == ["sentence_type"]
    assert dialog.table.horizontalHeaderItem(6).text() == "sentence_type\n→ attribute"
    assert "Kept as item attributes: sentence_type" in dialog.plan_label.text()
    # Unticked, the column is dropped, and the preview says so.
    dialog.keep_attributes.setChecked(False)
    dialog.refresh_preview()
    assert dialog.preview.attributes == [] and dialog.preview.ignored == ["sentence_type"]
    assert dialog.table.horizontalHeaderItem(6).text() == "sentence_type\n(ignored)"
    assert "Not imported: sentence_type" in dialog.plan_label.text()
    dialog.keep_attributes.setChecked(True)
    dialog.refresh_preview()
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    assert job.outcome == "done", job.failure
    assert "item attributes:" in dialog.report_view.toPlainText()
    page = window.page("browser")
    qtbot.waitUntil(lambda: page.attribute_combo.count() == 4, timeout=10_000)
