"""The scatter: its points are the study's pairs, hover tells which, a click opens one."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from meaningbench.ui.dashboard.correlations_tab import select_data
from meaningbench.ui.dashboard.scatter import fit_segment


def _widget_pos(scatter, k: int) -> QPoint:  # noqa: ANN001
    """Where point k is drawn, in the plot widget's viewport."""
    view = scatter.item.getViewBox()
    scene = view.mapViewToScene(QPointF(scatter.points.x[k], scatter.points.y[k]))
    return scatter.plot.mapFromScene(scene)


def test_points_and_fit_line(open_page, synth) -> None:
    path, facts = synth
    page = open_page(path)
    tab = page.correlations
    name = facts.metric_names[2]
    select_data(tab.metric_combo, name)
    expected = page.controller.state.scatter(name)
    points = tab.scatter.points
    assert list(points.ids) == expected["item_id"].tolist()
    np.testing.assert_allclose(points.x, expected["metric"])
    np.testing.assert_allclose(points.y, expected["human"])
    slope, intercept = np.polyfit(points.x, points.y, 1)
    assert tab.scatter.fit_params == pytest.approx((slope, intercept))
    xs, ys = tab.scatter.fit.getData()
    assert ys == pytest.approx(slope * xs + intercept)
    assert points.y.min() - 1e-9 <= ys.min() and ys.max() <= points.y.max() + 1e-9
    assert f"r = {page.controller.table().results[name].pearson:.3f}" in tab.scatter.title


def test_click_on_a_point_emits_its_item(open_page, synth, qtbot) -> None:
    path, facts = synth
    page = open_page(path)
    scatter = page.correlations.scatter
    qtbot.waitUntil(lambda: scatter.points.x.size > 0)
    # The point farthest from the others, so the click cannot pick a neighbour.
    x, y = scatter.points.x, scatter.points.y
    d = np.hypot(x[:, None] - x[None, :], y[:, None] - y[None, :]) + np.eye(x.size) * 1e9
    k = int(np.argmax(d.min(axis=1)))
    pos = _widget_pos(scatter, k)
    with qtbot.waitSignal(page.item_activated, timeout=3000) as blocker:
        qtbot.mouseClick(scatter.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [int(scatter.points.ids[k])]
    # A click on empty space opens nothing.
    empty = scatter.plot.mapFromScene(scatter.item.getViewBox().sceneBoundingRect().topLeft())
    with qtbot.assertNotEmitted(page.item_activated, wait=300):
        qtbot.mouseClick(
            scatter.plot.viewport(), Qt.MouseButton.LeftButton, pos=empty + QPoint(3, 3)
        )
    assert (
        scatter.points.nearest(
            scatter.points.mapFromScene(
                scatter.item.getViewBox().mapViewToScene(QPointF(x[k], y[k]))
            )
        )
        == k
    )


def test_hover_shows_the_pair(open_page, synth) -> None:
    path, facts = synth
    page = open_page(path)
    scatter = page.correlations.scatter
    k = 0
    item_id = int(scatter.points.ids[k])
    html = scatter.tooltip_html(k)
    assert facts.sources[item_id] in html and facts.outputs[item_id] in html
    assert f"{scatter.points.x[k]:.2f}" in html and f"{scatter.points.y[k]:.2f}" in html
    assert f"Item {item_id}" in html


def test_the_window_opens_a_clicked_item_on_the_compare_page(qtbot, synth) -> None:
    from meaningbench.ui.launch import start
    from tests.ui.dashboard.conftest import wait_ready

    path, facts = synth
    window = start(None, open_initial=False)
    qtbot.addWidget(window)
    try:
        assert window.studies.open_path(path)
        assert window.show_page("dashboard")
        page = window.page("dashboard")
        wait_ready(qtbot, page)
        item_id = facts.item_ids[7]
        page.item_activated.emit(item_id)
        assert window.current_page() == "compare"
        compare = window.page("compare")
        qtbot.waitUntil(lambda: compare.view.current_item_id() == item_id, timeout=5000)
    finally:
        window.close()


def test_fit_segment_stays_in_the_points_box() -> None:
    x = np.array([0.0, 10.0])
    y = np.array([0.0, 5.0])
    xs, ys = fit_segment((2.0, -5.0), x, y)
    assert xs.tolist() == [2.5, 5.0] and ys.tolist() == [0.0, 5.0]
    assert fit_segment(None, x, y) is None
    assert fit_segment((0.0, 2.0), x, y)[1].tolist() == [2.0, 2.0]
