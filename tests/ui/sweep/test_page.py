"""The Sweep page offscreen: a sweep run in the background fills the table and the curves;
bad choices are said on the page; the page is one of the window's pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.cli import main


@pytest.fixture
def page(qtbot, tmp_path: Path):  # noqa: ANN001, ANN201
    from meaningbench.db.study import open_study
    from meaningbench.ui.context import StudyContext
    from meaningbench.ui.sweep import SweepPage
    from tests.conftest import FIXTURE_DATASETS

    path = tmp_path / "dev.mbstudy"
    assert main(["import", str(path), str(FIXTURE_DATASETS / "csmd" / "dev.tsv")]) == 0
    context = StudyContext()
    context.runner.show_error_dialogs = False
    context.set_study(open_study(path))
    widget = SweepPage(context)
    qtbot.addWidget(widget)
    widget.resize(1300, 900)
    widget.show()
    yield widget
    context.runner.cancel_all()
    context.runner.wait(60_000)
    context.set_study(None)


def test_a_sweep_runs_in_the_background_and_shows_its_table(qtbot, page, tiny_encoder) -> None:  # noqa: ANN001
    page.models.setText(tiny_encoder)
    page.layers.setText("1-3")
    page.idf["sources"].setChecked(True)
    page.metrics["sbert_cosine"].setChecked(True)
    page.boot.setValue(100)
    job = page.start()
    assert job is not None and not page.run_button.isEnabled() and page.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: page.table_data is not None and page.job is None, timeout=180_000)
    table = page.table_data
    assert page.table.rowCount() == 3 * 2 + 3 == len(table.rows)
    shown = [[page.table.item(r, c).text() for c in range(4)] for r in range(page.table.rowCount())]
    assert ["1", "idf: sources, raw"] in [row[2:4] for row in shown]
    marks = [page.table.item(r, 4).text() for r in range(page.table.rowCount())]
    assert marks.count("★ best") == 1 and marks.count("runner-up") == 1
    best = table.best
    best_row = marks.index("★ best")
    low, high = best.pearson_ci
    assert page.table.item(best_row, 5).text() == f"{best.pearson:.3f}"
    assert page.table.item(best_row, 11).text() == f"[{low:.3f}, {high:.3f}]"
    assert page.table.item(best_row, 0).font().bold()
    # One curve per model · metric · variant, three layers each.
    assert len(page.curves.curves) == 3
    for curve in page.curves.curves.values():
        xs, _ = curve.getData()
        assert list(xs) == [1.0, 2.0, 3.0]
    assert "Williams p" in page.verdict.text() and "Best by pearson" in page.verdict.text()
    assert page.run_button.isEnabled() and not page.cancel_button.isEnabled()


def test_bad_choices_are_said_on_the_page(page) -> None:  # noqa: ANN001
    page.layers.setText("9-12")
    assert page.start() is None
    assert "out of range" in page.status.text() and page.job is None
    page.layers.setText("all")
    for box in page.metrics.values():
        box.setChecked(False)
    assert page.start() is None
    assert "a sweep scores bertscore and sbert_cosine" in page.status.text()


def test_the_window_lists_the_sweep_page(qtbot) -> None:  # noqa: ANN001
    from meaningbench.ui.main_window import _default_pages

    assert "sweep" in [spec.key for spec in _default_pages()]


def test_cancel_stops_the_sweep_in_the_background(qtbot, page, tiny_encoder) -> None:  # noqa: ANN001
    page.models.setText(tiny_encoder)
    job = page.start()
    assert job is not None
    page.cancel_button.click()
    assert "Cancelling" in page.status.text()
    qtbot.waitUntil(lambda: page.job is None, timeout=180_000)
    assert job.outcome in ("cancelled", "done")
    if job.outcome == "cancelled":
        assert page.status.text() == "Cancelled; finished runs kept"
    assert page.run_button.isEnabled()
