"""Every metric's correlation with the humans as horizontal bars, intervals as error bars.

Horizontal because metric names are long and there may be thirty of them. The human
ceiling (√ reliability of the human item scores) is a dashed vertical line: a metric's
correlation is not expected beyond it. Clicking a bar picks that metric for the scatter.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QToolTip, QWidget

from meaningbench.queries.dashboard_stats import BarSeries
from meaningbench.ui.dashboard.plots import (
    PlotColors,
    axis_label,
    fill_with_plot,
    fit_left_axis,
    metric_rows_plot,
    style_plot,
)

BAR_HEIGHT = 0.62
# Correlations live on −1…1: that scale is drawn whatever the values, with these ticks.
R_TICKS = [
    [(v, f"{v:g}") for v in (-1.0, -0.5, 0.0, 0.5, 1.0)],
    [(round(v, 1), "") for v in np.arange(-1.0, 1.01, 0.1)],
]
# Room beyond ±1 for the value labels of bars near the ends, in r units: at least this,
# more on a narrow plot (a label's width is fixed in pixels), at most the second.
R_LABEL_ROOM = (0.2, 0.6)
LABEL_PX = 52  # "-0.000" and its gap, in pixels


def is_bounded(key: str) -> bool:
    """Whether a statistic is a correlation, bounded by −1 and 1 (R² is not)."""
    return key != "r2"


class CorrelationBars(QWidget):
    metric_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot, self.item = metric_rows_plot()
        # pyqtgraph rescales an axis whose values are all below 1 in magnitude to "(x0.001)"
        # with ticks in the hundreds; r is read as it is.
        self.item.getAxis("bottom").enableAutoSIPrefix(False)
        self.bars = pg.BarGraphItem(x0=[], y=[], height=BAR_HEIGHT, width=[])
        self.errors = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), beam=0.28)
        self.ceiling_line = pg.InfiniteLine(
            angle=90,
            movable=False,
            label="human ceiling",
            # Inverted y: 0.99 is the bottom, in the strip kept free below the last bar.
            labelOpts={"position": 0.99, "anchors": [(1.0, 1.0), (1.0, 1.0)]},
        )
        self.zero_line = pg.InfiniteLine(pos=0.0, angle=90, movable=False)
        for it in (self.zero_line, self.bars, self.errors, self.ceiling_line):
            self.item.addItem(it)
        self.ceiling_line.hide()
        self.labels: list[pg.TextItem] = []
        self.series: BarSeries | None = None
        self.ceiling: float | None = None
        self.stale_intervals = False
        self._layout: tuple[object, ...] | None = None
        self._x_shown: tuple[float, float] | None = None
        self.colors = PlotColors.from_palette()
        fill_with_plot(self, self.plot)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        # The labels' room beyond ±1 depends on the plot's width in pixels.
        self.item.getViewBox().sigResized.connect(self._on_view_resized)
        self.plot.scene().sigMouseClicked.connect(self._on_clicked)
        self.apply_colors(self.colors)

    # -- appearance ------------------------------------------------------------------------
    def apply_colors(self, colors: PlotColors) -> None:
        self.colors = colors
        style_plot(self.plot, colors)
        self.zero_line.setPen(pg.mkPen(colors.grid, width=1))
        pen = pg.mkPen(colors.accent, width=2, style=Qt.PenStyle.DashLine)
        self.ceiling_line.setPen(pen)
        self.ceiling_line.label.setColor(colors.accent)
        # With many metrics the label sits on the last bar: a backing keeps it legible.
        backing = QColor(colors.background)
        backing.setAlpha(235)
        self.ceiling_line.label.fill = pg.mkBrush(backing)
        if self.series is not None:
            self.set_series(self.series, self.ceiling, stale_intervals=self.stale_intervals)

    # -- data --------------------------------------------------------------------------------
    def set_series(
        self, series: BarSeries, ceiling: float | None = None, *, stale_intervals: bool = False
    ) -> None:
        self.series, self.ceiling, self.stale_intervals = series, ceiling, stale_intervals
        c = self.colors
        m = len(series)
        pos = np.arange(m, dtype=float)
        v = series.values
        shown = np.where(np.isfinite(v), v, 0.0)
        brushes = [pg.mkBrush(c.bar if x >= 0 else c.negative) for x in shown]
        self.bars.setOpts(
            x0=np.minimum(shown, 0.0),
            y=pos,
            height=BAR_HEIGHT,
            width=np.abs(shown),
            brushes=brushes,
            pens=[pg.mkPen(None)] * m,
        )
        has = np.isfinite(series.lows) & np.isfinite(series.highs) & np.isfinite(v)
        style = Qt.PenStyle.DotLine if stale_intervals else Qt.PenStyle.SolidLine
        self.errors.setData(
            x=v[has],
            y=pos[has],
            left=(v - series.lows)[has],
            right=(series.highs - v)[has],
            beam=0.28,
            pen=pg.mkPen(c.text, width=1.4, style=style),
        )
        # A live refresh moves the numbers, rarely the names or the scale: axes, labels
        # and ranges are only touched when they change (each costs a relayout).
        layout = (tuple(series.names), series.statistic.label, c.text.rgba())
        if layout != self._layout:
            self._layout = layout
            axis = self.item.getAxis("left")
            axis.setTicks([[(k, name) for k, name in enumerate(series.names)]])
            fit_left_axis(self.plot, series.names)
            axis_label(self.plot, "bottom", series.statistic.label, c)
            bottom = self.item.getAxis("bottom")
            bottom.setTicks(R_TICKS if is_bounded(series.statistic.key) else None)
            self.item.setYRange(-0.6, max(m, 1) + 0.15, padding=0)
        lo, hi = self._x_range(series, ceiling)
        self._set_labels(series, pos, 0.012 * (hi - lo))
        if ceiling is not None and np.isfinite(ceiling) and series.statistic.ceiling:
            self.ceiling_line.show()  # first: a hidden line's label ignores new text
            self.ceiling_line.setPos(ceiling)
            text = f"human ceiling {ceiling:.2f}"
            if self.ceiling_line.label.toPlainText() != text:
                self.ceiling_line.label.setFormat(text)
                self.ceiling_line.setToolTip(
                    f"Human ceiling {ceiling:.3f}: √ of the reliability of the human item scores"
                )
        else:
            self.ceiling_line.hide()
        if (lo, hi) != self._x_shown:
            self._x_shown = (lo, hi)
            self.item.setXRange(lo, hi, padding=0)

    def _x_range(self, series: BarSeries, ceiling: float | None) -> tuple[float, float]:
        parts = [series.values, series.lows, series.highs, np.array([0.0])]
        if ceiling is not None and series.statistic.ceiling:
            parts.append(np.array([ceiling]))
        allv = np.concatenate(parts)
        allv = allv[np.isfinite(allv)]
        lo, hi = float(allv.min()), float(allv.max())
        if is_bounded(series.statistic.key):
            # The whole scale, whatever the values, with room beyond it for the value
            # labels of bars near ±1: a bar's length reads the same in every study.
            room = self._label_room()
            return -1.0 - room, 1.0 + room
        span = max(hi - lo, 0.1)
        # Room on the right (and left, for negative bars) for the value labels; rounded
        # out to a grid so that one more rating does not shift the axis.
        step = 0.05 if span <= 2.5 else 0.5
        left = lo - (0.16 * span if lo < 0 else 0.02 * span)
        right = hi + 0.16 * span
        return float(np.floor(left / step) * step), float(np.ceil(right / step) * step)

    def _label_room(self) -> float:
        """The room (in r) a value label needs beyond ±1 at the plot's width: r / (2 + 2r)
        of the width is LABEL_PX, rounded up to 0.05 so that a small resize keeps it."""
        width = self.item.getViewBox().width()
        lo, hi = R_LABEL_ROOM
        if width <= 2 * LABEL_PX:
            return hi
        room = 2 * LABEL_PX / (width - 2 * LABEL_PX)
        return min(hi, max(lo, float(np.ceil(room / 0.05) * 0.05)))

    def _on_view_resized(self) -> None:
        if self.series is not None:
            lo, hi = self._x_range(self.series, self.ceiling)
            if (lo, hi) != self._x_shown:
                self._x_shown = (lo, hi)
                self.item.setXRange(lo, hi, padding=0)
                self._set_labels(
                    self.series, np.arange(len(self.series), dtype=float), 0.012 * (hi - lo)
                )

    def _set_labels(self, series: BarSeries, pos: np.ndarray, pad: float) -> None:
        while len(self.labels) < len(series):
            label = pg.TextItem(anchor=(0, 0.5))
            self.item.addItem(label)
            self.labels.append(label)
        for k, label in enumerate(self.labels):
            if k >= len(series):
                label.hide()
                continue
            v = series.values[k]
            if not np.isfinite(v):
                text, color, anchor, x = "–", self.colors.muted, (0, 0.5), pad
            else:
                hi = series.highs[k] if np.isfinite(series.highs[k]) else v
                lo = series.lows[k] if np.isfinite(series.lows[k]) else v
                right = v >= 0
                text, color = f"{v:.3f}", self.colors.text
                anchor = (0, 0.5) if right else (1, 0.5)
                x = (max(v, hi) + pad) if right else (min(v, lo) - pad)
            key = (text, color.rgba(), anchor)
            if getattr(label, "shown_key", None) != key:  # re-laying out text is the slow part
                label.setText(text, color=color)
                label.setAnchor(anchor)
                label.shown_key = key
            label.setPos(x, pos[k])
            label.show()

    def values(self) -> dict[str, float]:
        """What the bars show, by metric (for tests and the status line)."""
        if self.series is None:
            return {}
        return dict(zip(self.series.names, self.series.values.tolist(), strict=True))

    # -- interaction ---------------------------------------------------------------------
    def bar_at(self, scene_pos: QPointF) -> int | None:
        if self.series is None or not self.item.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.item.getViewBox().mapSceneToView(scene_pos)
        k = int(round(point.y()))
        if 0 <= k < len(self.series) and abs(point.y() - k) <= BAR_HEIGHT / 2 + 0.1:
            return k
        return None

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        k = self.bar_at(scene_pos)
        text = "" if k is None or self.series is None else self.series.describe(k)
        if self.plot.toolTip() != text:
            self.plot.setToolTip(text)
            if not text:
                QToolTip.hideText()

    def _on_clicked(self, event: object) -> None:
        k = self.bar_at(event.scenePos())  # type: ignore[attr-defined]
        if k is not None and self.series is not None:
            self.metric_clicked.emit(self.series.names[k])
