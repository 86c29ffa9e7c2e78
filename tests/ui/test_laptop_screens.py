"""Every page fits a laptop: 1280×720 works and 1024×640 stays usable with 15 metrics scored.

The window's minimum size is the largest minimum of its pages (a stacked widget keeps all of
them), so one wide header or one combo sized to the longest metric name is enough to force
the window past a small screen.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.ui.dashboard.conftest import wait_ready
from tests.ui.dashboard.studies import synthetic_study

N_METRICS = 15
# Names as long as the canonical metric specs the tables and exports print.
LONG_NAMES = [f"meaning_preservation_score_{j:02d}_of_a_long_run" for j in range(N_METRICS)]


@pytest.fixture
def many_metrics(tmp_path: Path) -> Path:
    study, _ = synthetic_study(
        tmp_path / "wide.mbstudy", n_items=48, n_metrics=N_METRICS, n_raters=3, rated_share=0.8
    )
    path = study.path
    study.close()
    conn = sqlite3.connect(path)
    with conn:
        for j, name in enumerate(LONG_NAMES):
            conn.execute(
                "UPDATE metric_run SET metric = ?, label = ? WHERE metric = ?",
                (name, name, f"metric{j:02d}"),
            )
    conn.close()
    return path


def visit_every_page(window, qtbot) -> None:  # noqa: ANN001
    """Show each page and each of its tabs, so every widget has its real contents."""
    assert window.show_page("dashboard")
    dashboard = window.page("dashboard")
    wait_ready(qtbot, dashboard)
    for i in range(dashboard.tabs.count()):
        qtbot.mouseClick(
            dashboard.tabs.tabBar(),
            Qt.MouseButton.LeftButton,
            pos=dashboard.tabs.tabBar().tabRect(i).center(),
        )
        qtbot.wait(50)
    assert window.show_page("compare")
    qtbot.waitUntil(lambda: window.page("compare").view.proxy.rowCount() > 0, timeout=10_000)
    assert window.show_page("annotate")
    annotate = window.page("annotate")
    assert annotate.start("rater1")


@pytest.mark.parametrize("size", [(1280, 720), (1024, 640)])
def test_every_page_fits_a_laptop_screen(window, qtbot, many_metrics, size) -> None:
    from tests.ui.conftest import open_in

    window.show()
    open_in(window, many_metrics, qtbot)
    visit_every_page(window, qtbot)
    width, height = size
    window.resize(width, height)
    qtbot.wait(50)
    stack = window.stack
    for key in ("browser", "annotate", "dashboard", "compare"):
        window.show_page(key)
        page = window.page(key)
        hint = page.minimumSizeHint()
        assert hint.width() <= stack.width(), (key, hint)
        assert hint.height() <= stack.height(), (key, hint)
    hint = window.minimumSizeHint()
    assert hint.width() <= width and hint.height() <= height, hint
    assert (window.width(), window.height()) == (width, height)


def test_the_compare_table_keeps_the_output_readable_with_15_metrics(
    window, qtbot, many_metrics
) -> None:
    from tests.ui.conftest import open_in

    window.show()
    open_in(window, many_metrics, qtbot)
    window.resize(1024, 640)
    assert window.show_page("compare")
    view = window.page("compare").view
    qtbot.waitUntil(lambda: view.proxy.rowCount() > 0, timeout=10_000)
    qtbot.wait(50)
    table, model = view.table, view.model
    header = table.horizontalHeader()
    titles = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    metric_cols = [c for c, col in enumerate(model.columns) if col.key.startswith("metric:")]
    assert len(metric_cols) == N_METRICS
    output_w = header.sectionSize(1)
    assert output_w >= table.fontMetrics().horizontalAdvance("x" * 30)
    for col in metric_cols:
        # A number column is a few numbers wide, however long the metric's name.
        assert header.sectionSize(col) <= 3 * (table.fontMetrics().horizontalAdvance("100.0") + 30)
        assert header.sectionSize(col) < output_w
        # The elided name is whole in the header's tooltip.
        tip = model.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert titles[col] in tip and titles[col] in LONG_NAMES
    # At 640 px high the table still shows three outputs whole (or all of them).
    qtbot.wait(100)
    shown = min(3, view.proxy.rowCount())
    assert table.viewport().height() >= sum(table.rowHeight(r) for r in range(shown))
    # Past the viewport, the table scrolls sideways instead of squeezing the output.
    assert table.horizontalScrollBar().maximum() > 0
    QApplication.processEvents()
