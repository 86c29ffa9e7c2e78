"""The Rater QC view on a real study where one rater turns careless halfway: the summary
names the careless stretches, the table gives each rater's whole-queue figures and
practice, the plot draws a line per rater (a gap where a stretch has no figure) with the
threshold, another stretch length reads again, and a study without ratings says why."""

from __future__ import annotations

import math
from pathlib import Path

import pyqtgraph as pg
import pytest

from meaningbench.db.study import create_study
from tests.analysis.careless_study import careless_study
from tests.ui.conftest import open_in


@pytest.fixture(scope="module")
def careless(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return careless_study(tmp_path_factory.mktemp("qc-view") / "qc.mbstudy")


def _dialog(window, qtbot, path: Path, *, wait_rows: bool = True):  # noqa: ANN001, ANN202
    window.show()
    if wait_rows:
        open_in(window, path, qtbot)
    else:
        assert window.studies.open_path(path)
    assert window.show_page("campaign")
    page = window.page("campaign")
    page.qc_button.click()
    dialog = page.qc_view
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.view is not None and dialog.job is None, timeout=10_000)
    return dialog


def _rows(table) -> list[list[str]]:  # noqa: ANN001
    return [
        [table.item(r, c).text() for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]


def _curves(dialog) -> list[pg.PlotDataItem]:  # noqa: ANN001
    return [i for i in dialog.plot.getPlotItem().items if isinstance(i, pg.PlotDataItem)]


def test_the_careless_stretches_show(window, qtbot, careless: Path) -> None:  # noqa: ANN001
    dialog = _dialog(window, qtbot, careless)
    summary = dialog.summary.text()
    assert "3 raters (meaning), each in stretches of 20 ratings" in summary
    assert "2 stretches cross a threshold: cy items 41–60; cy items 61–76." in summary
    rows = {r[0]: r for r in _rows(dialog.table)}
    assert rows["cy"][1:3] == ["76", "1 of 2"] and rows["ann"][2] == "–"
    assert rows["cy"][7] == "2 of 4: 41–60, 61–76" and rows["ann"][7] == "none"
    assert float(rows["cy"][4].removesuffix(" s")) > 3  # the whole queue's median hides it
    tip = dialog.table.item(2, 7).toolTip()
    assert "items 41–60, 2026-03-02 09:13 to 2026-03-02 09:19" in tip
    assert "! median 1.0 s per item (below 3 s)" in tip

    # Controls passed: one line per rater, cy's falling to 0 % after item 40.
    curves = _curves(dialog)
    assert len(curves) == 3
    x, y = curves[2].getData()
    assert list(x) == [10.5, 30.5, 50.5, 68.5] and list(y[2:]) == [0.0, 0.0]
    threshold = [i for i in dialog.plot.getPlotItem().items if isinstance(i, pg.InfiniteLine)]
    assert [line.value() for line in threshold] == [80.0]

    dialog.table.selectRow(2)  # cy's line drawn thicker than the others
    widths = [c.opts["pen"].widthF() for c in _curves(dialog)]
    assert widths[2] > widths[0] == widths[1]
    dialog.measure.setCurrentIndex(1)  # seconds per item
    x, y = _curves(dialog)[2].getData()
    assert min(y[:2]) > 9 and list(y[2:]) == pytest.approx([1.0, 1.0])
    assert "Seconds per item" in dialog.plot.getPlotItem().getAxis("left").labelText

    dialog.stretch.setValue(40)
    dialog.stretch.editingFinished.emit()
    qtbot.waitUntil(lambda: dialog.job is None and dialog.view.timeline.stretch == 40)
    assert "cy items 41–76" in dialog.summary.text()
    assert len(_curves(dialog)[2].getData()[0]) == 2


def test_a_stretch_without_a_figure_is_a_gap_in_its_line(window, qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from tests.analysis.studybuild import SOURCES, add_items, add_ratings

    path = tmp_path / "thin.mbstudy"
    study = create_study(path)
    try:
        ids = add_items(study, [(s, s.split(" ", 1)[1], "a") for s in SOURCES])
        add_ratings(study, "dee", {i: float(10 * k) for k, i in enumerate(ids)})
        add_ratings(study, "eve", {i: float(12 * k) for k, i in enumerate(ids[:5])})
    finally:
        study.close()
    dialog = _dialog(window, qtbot, path)
    dialog.stretch.setValue(5)
    dialog.stretch.editingFinished.emit()
    qtbot.waitUntil(lambda: dialog.job is None and dialog.view.timeline.stretch == 5)
    dialog.measure.setCurrentIndex(2)  # r with the others
    _x, y = _curves(dialog)[0].getData()
    assert y[0] == pytest.approx(1.0) and math.isnan(y[1])  # dee's items 6–8: nobody else


def test_a_study_without_ratings_says_why(window, qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "none.mbstudy"
    from tests.analysis.studybuild import SOURCES, add_items

    study = create_study(path)
    try:
        add_items(study, [(SOURCES[0], "The cat sat.", "s")])
    finally:
        study.close()
    dialog = _dialog(window, qtbot, path)
    assert dialog.summary.text() == "No rater has given meaning ratings in this study yet."
    assert dialog.table.rowCount() == 0 and _curves(dialog) == []
