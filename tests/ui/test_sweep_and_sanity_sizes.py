"""The Sweep page and the sanity table on ordinary screens, in both themes: the sweep plot
takes the theme's colours (pyqtgraph's own are black), the sweep table shows what a
configuration is and how it ranks at 1024 px, and the pass-rate table shows several rows
at 1366×768 and 1024×640, not one."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QPalette

from tests.ui.sweep.sweep_rows import MODEL as MODEL_NAME
from tests.ui.sweep.sweep_rows import sweep_table

# The columns a 1024-px window must show without scrolling, and those 1366 px adds.
KEY_COLUMNS = ["Metric", "Layer", "Variant", "Rank", "Pearson", "Spearman"]
WIDE_COLUMNS = [*KEY_COLUMNS, "Kendall", "RMSE 0–1", "MAE 0–1", "n"]


def sweep_page(window, tmp_path: Path):  # noqa: ANN001, ANN201
    assert window.studies.create_path(tmp_path / "sweep.mbstudy")
    window.show()
    assert window.show_page("sweep")
    return window.page("sweep")


def plot_colours(page) -> tuple[str, str]:  # noqa: ANN001
    plot = page.curves.plot
    axis = plot.getPlotItem().getAxis("left")
    return plot.backgroundBrush().color().name(), axis.textPen().color().name()


def switch_theme(window, qtbot, theme: str) -> tuple[str, str]:  # noqa: ANN001
    """Switch; the (background, text) colours the plot must then have."""
    window.set_theme(theme)
    qtbot.wait(20)
    pal = window.palette()
    return pal.color(QPalette.ColorRole.Base).name(), pal.color(QPalette.ColorRole.Text).name()


def test_the_sweep_plot_follows_the_theme(window, qtbot, tmp_path: Path) -> None:
    page = sweep_page(window, tmp_path)
    for theme in ("light", "dark", "light"):
        expected = switch_theme(window, qtbot, theme)
        assert plot_colours(page) == expected, (theme, "before a sweep")
    page.show_result(sweep_table())
    for theme in ("dark", "light"):
        expected = switch_theme(window, qtbot, theme)
        assert plot_colours(page) == expected, (theme, "with a sweep")
        assert page.curves.legend.palette().color(QPalette.ColorRole.WindowText).name() == (
            window.palette().color(QPalette.ColorRole.WindowText).name()
        )


def test_the_sweep_legend_covers_no_curve(window, qtbot, tmp_path: Path) -> None:
    """The legend is under the plot (it was drawn on it, over the curves it names), each
    curve in its colour, without the model every curve shares (the verdict names it)."""
    from meaningbench.ui.sweep.curves import SERIES_COLORS

    page = sweep_page(window, tmp_path)
    window.resize(1024, 640)
    page.show_result(sweep_table())
    qtbot.wait(50)
    curves = page.curves
    plot_item = curves.plot.getPlotItem()
    assert plot_item.legend is None, "no legend item inside the plot"
    legend = curves.legend
    assert legend.isVisible() and legend.parent() is curves
    plot_box, legend_box = curves.plot.geometry(), legend.geometry()
    assert not plot_box.intersects(legend_box), (plot_box, legend_box)
    assert legend_box.height() >= legend.heightForWidth(legend.width())
    text = legend.text()
    assert MODEL_NAME not in text and "best&nbsp;configuration" in text
    for n, name in enumerate(curves.curves):
        assert SERIES_COLORS[n] in text
        assert name.split(" · ", 1)[1].replace(" ", "&nbsp;") in text


def fully_shown(table) -> list[str]:  # noqa: ANN001
    header, width = table.horizontalHeader(), table.viewport().width()
    return [
        table.horizontalHeaderItem(c).text()
        for c in range(table.columnCount())
        if not table.isColumnHidden(c)
        and header.sectionViewportPosition(c) >= 0
        and header.sectionViewportPosition(c) + header.sectionSize(c) <= width
    ]


@pytest.mark.parametrize(
    ("size", "columns"), [((1024, 640), KEY_COLUMNS), ((1366, 768), WIDE_COLUMNS)]
)
def test_the_sweep_table_shows_its_key_columns(window, qtbot, tmp_path, size, columns) -> None:
    page = sweep_page(window, tmp_path)
    window.resize(1500, 960)  # the sweep finished in a large window, then it is made small
    page.show_result(sweep_table())
    qtbot.wait(50)
    window.resize(*size)
    qtbot.wait(50)
    shown = fully_shown(page.table)
    assert all(c in shown for c in columns), shown
    # The rest is reached by scrolling; the intervals are in the values' tooltips too.
    table = page.table
    if len(shown) < table.columnCount() - 1:
        assert table.horizontalScrollBar().maximum() > 0
    best = next(r for r in range(table.rowCount()) if table.item(r, 4).text() == "★ best")
    assert "95% CI [" in table.item(best, 5).toolTip()
    cell = table.visualItemRect(table.item(best, 4))
    assert table.viewport().rect().contains(cell), "the best row is in view"
    rows_shown = table.viewport().height() // table.rowHeight(0)
    assert rows_shown >= 4


LEXICAL = ["bleu", "chrf", "compression", "rouge1", "rouge2", "rougel", "ter"]


@pytest.fixture
def scored_demo(tmp_path: Path) -> Path:
    from meaningbench.datasets.demo import build_demo_study
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.runtime import JobContext

    path = build_demo_study(tmp_path / "demo.mbstudy")
    score_study(ScoreRequest(path, LEXICAL, {"pool": "never"}), JobContext())
    return path


@pytest.mark.parametrize("size", [(1366, 768), (1024, 640)])
def test_the_sanity_table_shows_several_rows(window, qtbot, scored_demo, size) -> None:
    from tests.ui.conftest import open_in
    from tests.ui.dashboard.conftest import wait_ready

    window.show()
    open_in(window, scored_demo, qtbot)
    window.resize(*size)
    assert window.show_page("dashboard")
    dashboard = window.page("dashboard")
    wait_ready(qtbot, dashboard, timeout=60_000)
    sanity = dashboard.sanity
    dashboard.tabs.setCurrentIndex(dashboard.tabs.indexOf(sanity))
    sanity.run()
    qtbot.waitUntil(lambda: sanity.handle is None and sanity.shown is not None, timeout=120_000)
    table = sanity.table
    # The chart takes its height when the layout settles, a few events after the result.
    qtbot.waitUntil(lambda: sanity.chart_panel.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: sanity.chart_panel.height() >= 150, timeout=10_000)
    assert table.model_.rowCount() == len(LEXICAL)
    rows_shown = table.viewport().height() / table.verticalHeader().defaultSectionSize()
    assert rows_shown >= 5, rows_shown
