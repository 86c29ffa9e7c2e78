"""Layer curves of a sweep: the ranking correlation against the layer, one curve per model,
metric and variant, with its bootstrap interval as a band and the best configuration
starred."""

from __future__ import annotations

import html
import math
from collections import defaultdict

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QResizeEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from meaningbench.queries.sweep import SweepRow, SweepTable
from meaningbench.ui.dashboard.plots import PlotColors, axis_label, make_plot, style_plot

# Colour-blind-safe (Tol's bright scheme), enough for a handful of curves.
SERIES_COLORS = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb")


def _faded(color: QColor, alpha: int) -> QColor:
    out = QColor(color)
    out.setAlpha(alpha)
    return out


def series_of(table: SweepTable) -> dict[str, list[SweepRow]]:
    """Rows with a value, by curve (model · metric · variant), in layer order."""
    out: dict[str, list[SweepRow]] = defaultdict(list)
    for row in table.rows:
        if math.isfinite(getattr(row, table.rank_by)):
            e = row.entry
            out[f"{e.model} · {e.metric} · {e.variant}"].append(row)
    return {k: sorted(v, key=lambda r: r.entry.layer) for k, v in out.items()}


def legend_names(keys: list[str]) -> dict[str, str]:
    """Each curve's name as the legend shows it: without the model when every curve is of
    the same one (the verdict above names it)."""
    models = {key.split(" · ", 1)[0] for key in keys}
    if len(models) != 1:
        return {key: key for key in keys}
    return {key: key.split(" · ", 1)[1] if " · " in key else key for key in keys}


def legend_html(entries: list[tuple[str, str]], marks: int) -> str:
    """Swatches and names, one after the other (wrapping): a line for the curves, a star
    for the best configuration."""
    parts = []
    for n, (color, name) in enumerate(entries):
        mark = "━●" if n < marks else "★"
        words = html.escape(name).replace(" ", "&nbsp;")  # an entry wraps as a whole
        parts.append(f"<span style='color:{color}'>{mark}</span>&nbsp;{words}")
    return "&nbsp;&nbsp; ".join(parts)


class LayerCurves(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sweepCurves")
        self.plot = make_plot(mouse=True)
        self.plot.setObjectName("sweepPlot")
        self.plot.setMinimumSize(420, 200)  # and the legend under it
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.25)
        item.getAxis("left").enableAutoSIPrefix(False)
        # The legend is under the plot, not on it: names as long as "model · metric ·
        # variant" covered the curves they name.
        self.legend = QLabel()
        self.legend.setObjectName("sweepLegend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.legend.setMinimumWidth(120)  # a long model folder is cut, never the window widened
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.legend)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.table: SweepTable | None = None
        self.colors = PlotColors.from_palette()
        style_plot(self.plot, self.colors)  # the theme's colours before the first sweep too

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        # The splitter above reads minimum heights, not heights for a width: the legend's
        # wrapped lines are made its minimum, so the plot never slides under it.
        super().resizeEvent(event)
        self._hold_legend_height()

    def _hold_legend_height(self) -> None:
        need = self.legend.heightForWidth(max(1, self.width()))
        if need > 0 and need != self.legend.minimumHeight():
            self.legend.setMinimumHeight(need)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # A theme switch: the plot follows the palette (pyqtgraph keeps its own colours).
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            colors = PlotColors.from_palette()
            if colors != self.colors:
                self.colors = colors
                if self.table is not None:
                    self.show_table(self.table)
                else:
                    style_plot(self.plot, colors)
        super().changeEvent(event)

    def show_table(self, table: SweepTable) -> None:
        self.table = table
        colors = self.colors = PlotColors.from_palette()
        style_plot(self.plot, colors)
        item = self.plot.getPlotItem()
        item.clear()
        axis_label(self.plot, "bottom", "layer", colors)
        axis_label(self.plot, "left", f"{table.rank_by.capitalize()} with human scores", colors)
        self.curves = {}
        series = series_of(table)
        names = legend_names(list(series))
        entries: list[tuple[str, str]] = []
        ci = "pearson_ci" if table.rank_by == "pearson" else "spearman_ci"
        for n, (name, rows) in enumerate(series.items()):
            color = QColor(SERIES_COLORS[n % len(SERIES_COLORS)])
            entries.append((color.name(), names[name]))
            x = [float(r.entry.layer) for r in rows]
            y = [float(getattr(r, table.rank_by)) for r in rows]
            low = [getattr(r, ci)[0] for r in rows]
            high = [getattr(r, ci)[1] for r in rows]
            if all(math.isfinite(v) for v in low + high) and len(rows) > 1:
                lower = pg.PlotDataItem(x, low, pen=pg.mkPen(None))
                upper = pg.PlotDataItem(x, high, pen=pg.mkPen(None))
                band = pg.FillBetweenItem(lower, upper, brush=pg.mkBrush(_faded(color, 28)))
                item.addItem(band)
            curve = item.plot(
                x, y, pen=pg.mkPen(color, width=2.2), symbol="o", symbolSize=7,
                symbolBrush=pg.mkBrush(color), symbolPen=pg.mkPen(colors.background, width=1),
            )  # fmt: skip
            self.curves[name] = curve
        best = table.best
        if best is not None:
            star = pg.ScatterPlotItem(
                [float(best.entry.layer)], [float(getattr(best, table.rank_by))],
                symbol="star", size=20, brush=pg.mkBrush(colors.accent),
                pen=pg.mkPen(colors.background, width=1),
            )  # fmt: skip
            item.addItem(star)
            entries.append((colors.accent.name(), "best configuration"))
        self.legend.setText(legend_html(entries, marks=len(series)))
        self._hold_legend_height()
        item.getAxis("bottom").setTickSpacing(major=1, minor=1)
        item.enableAutoRange()
