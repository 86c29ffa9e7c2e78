"""The correlations tab: bars of every metric, one metric's scatter, the statistics table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QMenu, QSplitter, QVBoxLayout, QWidget

from meaningbench.queries.dashboard import CorrelationTable
from meaningbench.queries.dashboard_stats import SORTS, STATISTICS, BarSeries, bar_series
from meaningbench.queries.tables import table_csv, table_latex
from meaningbench.ui.dashboard.bars import CorrelationBars
from meaningbench.ui.dashboard.formats import statistics_display
from meaningbench.ui.dashboard.panel import Panel
from meaningbench.ui.dashboard.plots import PlotColors, export_plot
from meaningbench.ui.dashboard.scatter import MetricScatter
from meaningbench.ui.dashboard.tables import FrameTable
from meaningbench.ui.widgets import compact_combo
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.ui.dashboard.controller import DashboardController


def _combo(items: dict[str, str], tip: str) -> QComboBox:
    combo = QComboBox()
    for key, text in items.items():
        combo.addItem(text, key)
    combo.setToolTip(tip)
    return combo


def select_data(combo: QComboBox, key: object) -> bool:
    index = combo.findData(key)
    if index >= 0:
        combo.setCurrentIndex(index)
    return index >= 0


class CorrelationsTab(QWidget):
    item_activated = Signal(int)

    def __init__(self, controller: DashboardController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.series: BarSeries | None = None
        self.table: CorrelationTable | None = None
        self.bars = CorrelationBars()
        self.statistic = _combo(
            {k: s.label for k, s in STATISTICS.items()}, "Which statistic the bars show"
        )
        self.sort = _combo(SORTS, "Order of the bars")
        for combo in (self.statistic, self.sort):
            compact_combo(combo, 8)
        self.bars_panel = Panel(
            "Correlation with the human ratings", self.bars, formats=("png", "svg"), name="bars"
        )
        self.bars_panel.add_header_widget(self.statistic)
        self.bars_panel.add_header_widget(self.sort)
        for fmt in ("png", "svg"):
            self.bars_panel.set_exporter(fmt, lambda p: export_plot(self.bars.plot, p))

        self.scatter = MetricScatter()
        self.metric_combo = QComboBox()
        self.metric_combo.setToolTip("The metric plotted against the human scores")
        compact_combo(self.metric_combo, 12)
        self.scatter_panel = Panel(
            "Metric against humans", self.scatter, formats=("png", "svg"), name="scatter"
        )
        self.scatter_panel.add_header_widget(self.metric_combo)
        for fmt in ("png", "svg"):
            self.scatter_panel.set_exporter(fmt, lambda p: export_plot(self.scatter.plot, p))

        self.stats = FrameTable()
        self.stats_panel = Panel(
            "All statistics", self.stats, formats=("csv", "tex"), name="correlations"
        )
        self.stats_panel.set_exporter("csv", lambda p: table_csv(self._table(), p))
        self.stats_panel.set_exporter(
            "tex",
            lambda p: table_latex(
                self._table(), p, caption=self._caption(), label="tab:correlations"
            ),
        )

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.bars_panel)
        top.addWidget(self.scatter_panel)
        top.setSizes([560, 520])
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.stats_panel)
        split.setSizes([520, 320])
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

        self.statistic.currentIndexChanged.connect(self._on_statistic)
        self.sort.currentIndexChanged.connect(lambda _i: self.draw())
        self.metric_combo.currentIndexChanged.connect(lambda _i: self.draw_scatter())
        self.bars.metric_clicked.connect(lambda name: select_data(self.metric_combo, name))
        self.scatter.item_activated.connect(self.item_activated)
        self.bars.plot.customContextMenuRequested.connect(
            lambda pos: self.bars_panel.show_context_menu(self.bars.plot, pos)
        )
        self.scatter.plot.customContextMenuRequested.connect(self._scatter_menu)
        self.stats.customContextMenuRequested.connect(
            lambda pos: self.stats_panel.show_context_menu(self.stats.viewport(), pos)
        )

    def _table(self) -> CorrelationTable:
        if self.table is None:
            raise RuntimeError("no correlations to export yet")
        return self.table

    def _caption(self) -> str:
        t = self._table()
        scale = "per-annotator z-scores" if t.z else "mean ratings"
        return (
            f"Correlation of each metric with the human {t.dimension} scores ({scale}, "
            f"{counted(t.n_items, 'item')}); intervals: {round(100 * t.confidence)}% bootstrap over "
            f"{t.n_boot} resamples of {t.unit}."
        )

    def _scatter_menu(self, pos: object) -> None:
        menu = QMenu(self)
        menu.addAction("Reset zoom", self.scatter.reset_zoom)
        menu.addSeparator()
        for action in self.scatter_panel.menu.actions():
            menu.addAction(action)
        menu.popup(self.scatter.plot.mapToGlobal(pos))

    def apply_colors(self, colors: PlotColors) -> None:
        self.bars.apply_colors(colors)
        self.scatter.apply_colors(colors)

    def _on_statistic(self) -> None:
        self.controller.set_statistic(str(self.statistic.currentData()))

    # -- data ----------------------------------------------------------------------------
    def set_metric_names(self, names: list[str]) -> None:
        current = self.metric_combo.currentData()
        self.metric_combo.blockSignals(True)
        self.metric_combo.clear()
        for name in names:
            self.metric_combo.addItem(name, name)
        if current is not None:
            select_data(self.metric_combo, current)
        self.metric_combo.blockSignals(False)

    def show_message(self, text: str) -> None:
        for panel in (self.bars_panel, self.scatter_panel, self.stats_panel):
            panel.show_message(text)

    def draw(self) -> None:
        """Bars, table and scatter from the controller's current statistics."""
        c = self.controller
        table = c.table()
        self.table = table
        if not c.state.loaded or table is None:
            return
        if not table.results:
            self.show_message(
                "No metric scores yet. Run metrics (Study ▸ Run metrics…) to compare them "
                "with the human ratings."
            )
            return
        if table.n_items == 0:
            self.show_message(
                f"No human ratings on “{c.dimension}” yet. Ratings appear here as they are "
                "submitted."
            )
            return
        series = bar_series(table, str(self.statistic.currentData()), str(self.sort.currentData()))
        self.series = series
        self.bars.set_series(series, c.ceiling(), stale_intervals=c.intervals_stale)
        self.bars_panel.show_content()
        frame, formats = statistics_display(table, series.names)
        self.stats.set_frame(frame, formats, "metric")
        self.stats_panel.show_content()
        if self.metric_combo.currentData() is None and series.names:
            finite = [n for n, v in zip(series.names, series.values, strict=True) if np.isfinite(v)]
            self.metric_combo.blockSignals(True)
            select_data(self.metric_combo, finite[0] if finite else series.names[0])
            self.metric_combo.blockSignals(False)
        self.draw_scatter()

    def draw_scatter(self) -> None:
        c = self.controller
        column = self.metric_combo.currentData()
        table = self.table
        frame = c.state.scatter(str(column)) if column is not None else None
        if table is None or frame is None:
            return
        if frame.empty:
            self.scatter_panel.show_message(f"No item has both a {column} score and a rating.")
            return
        human = f"{c.dimension} ({'mean z-score' if c.z else 'mean rating'})"
        r = table.results.get(str(column))
        parts = [f"n = {len(frame):,}"]
        if r is not None and np.isfinite(r.pearson):
            parts[:0] = [f"r = {r.pearson:.3f}", f"ρ = {r.spearman:.3f}"]
        self.scatter.set_data(str(column), frame, human_label=human)
        if self.scatter.fit_params is not None:
            slope, intercept = self.scatter.fit_params
            parts.append(
                f"line: y = {slope:.3g} x {'+' if intercept >= 0 else '−'} {abs(intercept):.3g}"
            )
        self.scatter.set_title(" · ".join(parts))
        self.scatter_panel.show_content()
