"""The correlation bars are drawn on r's own −1…1 scale: a negative r must not switch the
axis to pyqtgraph's "(x0.001)" prefix with ticks in the hundreds, on screen or exported."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from meaningbench.queries.dashboard_stats import STATISTICS, BarSeries
from meaningbench.ui.dashboard.bars import CorrelationBars
from meaningbench.ui.dashboard.plots import export_plot


def series(values: list[float], statistic: str = "pearson") -> BarSeries:
    v = np.array(values, dtype=float)
    return BarSeries(
        statistic=STATISTICS[statistic],
        names=[f"metric {k}" for k in range(len(v))],
        values=v,
        lows=v - 0.1,
        highs=np.minimum(v + 0.1, 1.0),
        n=np.full(len(v), 60.0),
        p=np.full(len(v), 0.01),
    )


def shown_bars(qtbot, values: list[float], statistic: str = "pearson") -> CorrelationBars:  # noqa: ANN001
    bars = CorrelationBars()
    qtbot.addWidget(bars)
    bars.resize(700, 400)
    bars.show()
    qtbot.waitExposed(bars)
    bars.set_series(series(values, statistic), ceiling=0.8)
    qtbot.wait(50)
    return bars


def tick_labels(bars: CorrelationBars) -> list[str]:
    axis = bars.item.getAxis("bottom")
    lo, hi = axis.range
    levels = axis.tickValues(lo, hi, axis.width() or 600)
    if axis._tickLevels is not None:  # explicit ticks
        return [text for level in axis._tickLevels for _, text in level if text]
    return [s for spacing, vals in levels for s in axis.tickStrings(vals, 1.0, spacing)]


@pytest.mark.parametrize("statistic", ["pearson", "spearman", "kendall"])
def test_negative_r_keeps_the_minus_one_to_one_scale(qtbot, statistic: str) -> None:
    bars = shown_bars(qtbot, [0.6, 0.35, -0.2], statistic)
    axis = bars.item.getAxis("bottom")
    assert axis.autoSIPrefixScale == 1.0
    assert "x0.001" not in axis.labelString() and STATISTICS[statistic].label in (
        axis.labelString()
    )
    (x_lo, x_hi), _ = bars.item.getViewBox().viewRange()
    assert x_lo <= -1.0 and x_hi >= 1.0  # the whole scale is drawn
    assert x_lo >= -1.5 and x_hi <= 1.5
    labels = tick_labels(bars)
    assert [float(t) for t in labels] == [-1.0, -0.5, 0.0, 0.5, 1.0]


def test_the_same_scale_whatever_the_values(qtbot) -> None:
    bars = shown_bars(qtbot, [0.91, 0.88])
    first = bars.item.getViewBox().viewRange()[0]
    bars.set_series(series([0.1, -0.05]), ceiling=0.8)
    assert bars.item.getViewBox().viewRange()[0] == pytest.approx(first)


def test_exported_plot_has_r_ticks_and_no_prefix(qtbot, tmp_path: Path) -> None:
    bars = shown_bars(qtbot, [0.6, 0.35, -0.2])
    svg = export_plot(bars.plot, tmp_path / "bars.svg").read_text(encoding="utf-8")
    assert "Pearson r" in svg and "x0.001" not in svg
    texts = set(re.findall(r">\s*(-?[0-9.]+)\s*<", svg))
    assert {"-1", "-0.5", "0", "0.5", "1"} <= texts
    assert not any(abs(float(t)) >= 100 for t in texts if t not in {"60"})
    png = export_plot(bars.plot, tmp_path / "bars.png")
    assert png.stat().st_size > 1000


def test_r_squared_keeps_its_own_range(qtbot) -> None:
    bars = shown_bars(qtbot, [0.3, -2.5], "r2")
    (x_lo, _), _ = bars.item.getViewBox().viewRange()
    assert x_lo < -2.5
    assert bars.item.getAxis("bottom")._tickLevels is None


@pytest.mark.parametrize("width", [360, 900])
def test_value_labels_fit_beside_bars_near_one(qtbot, width: int) -> None:
    bars = shown_bars(qtbot, [0.93, -0.9])
    bars.resize(width, 400)
    qtbot.wait(100)
    box = bars.item.getViewBox().sceneBoundingRect()
    for label in bars.labels[:2]:
        shown = label.sceneBoundingRect()
        assert box.left() <= shown.left() and shown.right() <= box.right() + 1, (width, label)
    (x_lo, x_hi), _ = bars.item.getViewBox().viewRange()
    assert x_lo <= -1.0 and x_hi >= 1.0
