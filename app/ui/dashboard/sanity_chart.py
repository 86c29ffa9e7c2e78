"""Each metric's mean score on identical and on unrelated pairs, as paired bars.

The pass-rate table says how often a metric clears a threshold; the means say by how
much it misses: a metric at 0 % "≥ 95" may sit at 94 or at 60.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from meaningbench.queries.dashboard import SanityTable
from meaningbench.ui.dashboard.plots import (
    PlotColors,
    axis_label,
    fill_with_plot,
    fit_left_axis,
    metric_rows_plot,
    style_plot,
)

HEIGHT = 0.36
# Each metric's pair of bars needs about this many text lines of height to stay readable;
# past what the panel can give, the chart scrolls instead of squeezing the bars.
LINES_PER_METRIC = 2.2
LABELS = ("identical pairs (s, s)", "unrelated pairs (s, u)")


def _mean(values: np.ndarray) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


class SanityMeans(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot, self.item = metric_rows_plot()
        self.colors = PlotColors.from_palette()
        self.identical = pg.BarGraphItem(x0=[], y=[], height=HEIGHT, width=[])
        self.unrelated = pg.BarGraphItem(x0=[], y=[], height=HEIGHT, width=[])
        self.item.addItem(self.identical)
        self.item.addItem(self.unrelated)
        self.means: dict[str, tuple[float, float]] = {}
        fill_with_plot(self, self.plot)
        self.apply_colors(self.colors)

    def apply_colors(self, colors: PlotColors) -> None:
        self.colors = colors
        style_plot(self.plot, colors)
        self._draw()

    def set_table(self, table: SanityTable) -> None:
        self.means = {
            name: (_mean(r.identical_values), _mean(r.unrelated_values))
            for name, r in table.results.items()
            if r.error is None
        }
        self._fit_height()
        self._draw()

    def needed_height(self) -> int:
        line = self.fontMetrics().height()
        return int(len(self.means) * LINES_PER_METRIC * line + 6 * line)

    def _fit_height(self) -> None:
        self.setMinimumHeight(max(200, self.needed_height()))

    def _draw(self) -> None:
        c = self.colors
        names = list(self.means)
        pos = np.arange(len(names), dtype=float)
        ident = np.array([self.means[n][0] for n in names], dtype=float)
        unrel = np.array([self.means[n][1] for n in names], dtype=float)
        self.identical.setOpts(
            x0=np.zeros(len(names)),
            y=pos - HEIGHT / 2,
            height=HEIGHT,
            width=np.nan_to_num(ident),
            brush=pg.mkBrush(c.bar),
            pen=pg.mkPen(None),
        )
        self.unrelated.setOpts(
            x0=np.zeros(len(names)),
            y=pos + HEIGHT / 2,
            height=HEIGHT,
            width=np.nan_to_num(unrel),
            brush=pg.mkBrush(c.accent),
            pen=pg.mkPen(None),
        )
        self.item.getAxis("left").setTicks([[(k, n) for k, n in enumerate(names)], []])
        fit_left_axis(self.plot, names)
        axis_label(self.plot, "bottom", "mean score (0–100)", c)
        # The key as the title: a legend inside the plot would hide the longest bars.
        key = "&nbsp;&nbsp;&nbsp;".join(
            f"<span style='color:{color.name()}'>■</span> {text}"
            for color, text in ((c.bar, LABELS[0]), (c.accent, LABELS[1]))
        )
        size = f"{self.font().pointSizeF():.1f}pt"
        self.item.setTitle(key, color=c.text.name(), size=size)
        self.item.setXRange(0, 100, padding=0.02)
        self.item.setYRange(-0.6, max(len(names), 1) - 0.4, padding=0)
