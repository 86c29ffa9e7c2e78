"""The dashboard's "Which metric" tab: the metrics ranked in significance clusters, the
ranking measure per category of an item attribute, the p-values behind the clusters, and
whether the ranking has settled (the stopping signal).

The figures are `meaningbench.queries.which_metric` on the study file, computed by a worker
job of the dashboard's runner: after the study loads, and again (debounced) as ratings
arrive, one job at a time. While one runs the tab says "computing…" and keeps showing the
previous figures; the window never waits for it. Each ranking that arrives starts the
stopping signal's own job (a newer one cancels one still running).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries.tables import table_csv
from meaningbench.queries.which_metric import (
    CLUSTER_LINE,
    CLUSTER_MEANING,
    GAP_WORDS,
    GROUPING_CHOICES,
    MEASURE_CHOICES,
    PRESET_CHOICES,
    TEST_CHOICES,
    Stability,
    WhichMetric,
    WhichMetricOptions,
    compute_stability,
    compute_which_metric,
    preset_of,
    with_preset,
)
from meaningbench.ui.dashboard.panel import Panel
from meaningbench.ui.dashboard.plots import (
    PlotColors,
    axis_label,
    export_plot,
    fill_with_plot,
    fit_left_axis,
    metric_rows_plot,
    style_plot,
)
from meaningbench.ui.dashboard.stability_panel import StabilityView
from meaningbench.ui.widgets import ElidedLabel, compact_combo

if TYPE_CHECKING:
    from meaningbench.runtime import Job, JobContext
    from meaningbench.ui.dashboard.controller import DashboardController
    from meaningbench.ui.workers import JobFailure, JobHandle

# Ratings arrive one by one while someone rates: recompute at most this often.
RECOMPUTE_DEBOUNCE_MS = 1500
# Category colours (Paul Tol's bright scheme: told apart with colour-blindness too); the
# bar for all outputs takes the plots' own bar colour.
CATEGORY_COLORS = ("#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#4477aa")
ALL_OUTPUTS = "all outputs"
ATTRIBUTE_TIP = "The item attribute whose categories the bars compare"
NO_ATTRIBUTES = (
    "No item attributes: import a file with a category column (such as sentence_type) to "
    "compare the metrics per category."
)
GROUP_HEIGHT = 0.8
PRESET_TIP = (
    "A protocol of the metric literature. WMT25 (the WMT25 metrics task, as MTME runs it): "
    "acc*eq per source, ranked by MTME's pairwise permutation test with its early stopping. "
    "Its system-level task (SPA) is in `meaningbench metaeval --preset wmt25`. Changing the "
    "measure, grouping or test leaves the preset."
)
HUMAN_TIP = (
    "A human rater scored as if a metric, against the other raters only (Proietti et al., "
    "2025); the one-rater baseline is the raters' mean: what one more human would score."
)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def _p_words(text: str) -> str:
    """ "= 0.312" or "< 0.001": a p-value below what the resamples tell is no equality."""
    return text if text.startswith("<") else f"= {text}"


def which_metric_job(path: Path, options: WhichMetricOptions) -> Job[WhichMetric]:
    def run(ctx: JobContext) -> WhichMetric:
        def step(done: int, total: int, what: str) -> None:
            ctx.progress(done, total, what, force=True)
            ctx.check()  # a cancel, or options that replaced these, stops it here

        return compute_which_metric(path, options, step)

    return run


def stability_job(path: Path, options: WhichMetricOptions) -> Job[Stability]:
    def run(ctx: JobContext) -> Stability:
        ctx.progress(0, None, "Measuring how settled the ranking is", force=True)

        def step(done: int, total: int) -> None:
            ctx.progress(done, total, "Measuring how settled the ranking is")
            ctx.check()  # a newer ranking cancels this one

        return compute_stability(path, options, step)

    return run


class CategoryBars(QWidget):
    """The ranking measure of each metric (rows, best first), one bar per category."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot, self.item = metric_rows_plot()
        self.legend = self.item.addLegend(offset=(-10, 10))
        self.zero_line = pg.InfiniteLine(pos=0.0, angle=90, movable=False)
        self.item.addItem(self.zero_line)
        # A correlation of 0.3 is "0.3", not "300 (x0.001)".
        self.item.getAxis("bottom").enableAutoSIPrefix(False)
        self.bars: list[pg.BarGraphItem] = []
        self.result: WhichMetric | None = None
        # What is drawn: category → {metric: value}, for tests and the CSV.
        self.drawn: dict[str, dict[str, float]] = {}
        self.colors = PlotColors.from_palette()
        fill_with_plot(self, self.plot)
        self.apply_colors(self.colors)

    def apply_colors(self, colors: PlotColors) -> None:
        self.colors = colors
        style_plot(self.plot, colors)
        self.zero_line.setPen(pg.mkPen(colors.grid, width=1))
        self.legend.setLabelTextColor(colors.text)
        self.legend.setBrush(pg.mkBrush(colors.background))
        if self.result is not None:
            self.set_result(self.result)

    def set_result(self, result: WhichMetric) -> None:
        self.result = result
        for bar in self.bars:
            self.item.removeItem(bar)
        self.bars = []
        self.legend.clear()
        self.drawn = {}
        frame = result.categories
        if frame.empty or result.ranking is None:
            return
        metrics = list(dict.fromkeys(frame["metric"]))
        categories = list(dict.fromkeys(frame["category"]))
        height = GROUP_HEIGHT / len(categories)
        for k, category in enumerate(categories):
            rows = frame[frame["category"] == category]
            values = {
                str(m): float(v)
                for m, v in zip(rows["metric"], rows["value"], strict=True)
                if v is not None and np.isfinite(v)
            }
            if not values:  # not defined in this category (2 systems): no bar, no legend
                continue
            self.drawn[category or ALL_OUTPUTS] = values
            ys = [metrics.index(m) - GROUP_HEIGHT / 2 + (k + 0.5) * height for m in values]
            color = QColor(
                self.colors.bar if not category else CATEGORY_COLORS[(k - 1) % len(CATEGORY_COLORS)]
            )
            bar = pg.BarGraphItem(
                x0=np.zeros(len(values)),
                y=np.array(ys, dtype=float),
                width=np.array(list(values.values()), dtype=float),
                height=height * 0.92,
                brush=pg.mkBrush(color),
                pen=pg.mkPen(None),
            )
            self.item.addItem(bar)
            self.bars.append(bar)
            n = int(rows["n_outputs"].max()) if len(rows) else 0
            self.legend.addItem(bar, f"{category or ALL_OUTPUTS} (n = {n:,})")
        axis = self.item.getAxis("left")
        shown = [result.shown_name(m) for m in metrics]
        axis.setTicks([list(enumerate(shown))])
        fit_left_axis(self.plot, shown)
        label = MEASURE_CHOICES.get(result.options.measure, result.options.measure)
        axis_label(self.plot, "bottom", label, self.colors)
        drawn = [v for d in self.drawn.values() for v in d.values()] or [0.0]
        lo, hi = min(0.0, *drawn), max(0.0, *drawn)
        self.item.setXRange(lo, hi + 0.35 * (hi - lo or 1.0), padding=0.02)
        self.item.setYRange(-0.6, len(metrics) - 0.4, padding=0)


class PValueTable(QTableWidget):
    """p of "the row's metric is better than the column's", shaded where p ≤ α."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whichMetricPValues")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.colors = PlotColors.from_palette()
        self.result: WhichMetric | None = None

    def apply_colors(self, colors: PlotColors) -> None:
        self.colors = colors
        if self.result is not None:
            self.set_result(self.result)

    def set_result(self, result: WhichMetric) -> None:
        self.result = result
        p = result.p_values()
        ranking = result.ranking
        names = [str(n) for n in p.index]
        self.clear()
        self.setRowCount(len(names))
        self.setColumnCount(len(names))
        if ranking is None:
            return
        # Rows by rank and name, columns by rank alone: long metric specs fit once.
        self.setVerticalHeaderLabels(
            [f"{k + 1}. {result.shown_name(n)}" for k, n in enumerate(names)]
        )
        self.setHorizontalHeaderLabels([str(k + 1) for k in range(len(names))])
        for k, n in enumerate(names):
            header = self.horizontalHeaderItem(k)
            if header is not None:
                header.setToolTip(n)
        alpha = ranking.alpha
        strong = QColor(self.colors.bar)
        strong.setAlpha(200)
        test = TEST_CHOICES.get(ranking.test, ranking.test)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                value = float(p.iloc[i, j])
                cell = QTableWidgetItem("" if i == j else ranking.p_text(value))
                cell.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if i != j and np.isfinite(value):
                    cell.setToolTip(
                        f"{a} better than {b}: p {_p_words(ranking.p_text(value))} ({test}, "
                        f"{ranking.resamples:,} resamples, seed {ranking.seed})"
                    )
                    if value <= alpha:
                        cell.setBackground(QBrush(strong))
                        cell.setForeground(QBrush(QColor("#ffffff")))
                self.setItem(i, j, cell)


class RankingTable(QTableWidget):
    """Cluster, metric, value, 95% interval and distance from the one-rater baseline, best
    first; clusters shaded in turn; human rows in italics among the metrics by value."""

    HEADERS = ("Cluster", "Metric", "Value", "95% interval", "Δ one rater")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(self.HEADERS), parent)
        self.setObjectName("whichMetricRanking")
        self.setHorizontalHeaderLabels(list(self.HEADERS))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().hide()
        # Rows as tall as the text needs: a short screen shows every cluster.
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        cluster = self.horizontalHeaderItem(0)
        if cluster is not None:
            cluster.setToolTip(CLUSTER_MEANING)
        gap = self.horizontalHeaderItem(4)
        if gap is not None:
            gap.setToolTip(GAP_WORDS)
        self.result: WhichMetric | None = None
        # What each row holds: "metric", "human", or "note" (why there is no human row).
        self.row_kinds: list[str] = []

    def refresh_colors(self) -> None:
        """Cluster shading comes from the palette: fill again when the theme changes."""
        if self.result is not None:
            self.set_result(self.result)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # The theme's palette reaches the table after the dashboard's own colour update:
        # shade again when it arrives, or a dark theme keeps the light shade (white rows).
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.refresh_colors()

    def set_result(self, result: WhichMetric) -> None:
        self.result = result
        frame = result.ranking_frame()
        why_none = result.humans.reason if result.humans is not None else None
        self.clearSpans()
        self.setRowCount(len(frame) + (1 if why_none else 0))
        self.row_kinds = []
        shade = self.palette().alternateBase()
        muted = self.palette().placeholderText()
        for r, row in enumerate(frame.to_dict(orient="records")):
            human = row.get("kind") == "human"
            self.row_kinds.append("human" if human else "metric")
            cluster = row.get("cluster")
            cluster = None if cluster is None or pd.isna(cluster) else int(cluster)
            defined = row.get("value") is not None and not pd.isna(row.get("value"))
            low, high = row.get("low"), row.get("high")
            gap = row.get("gap_to_one_rater")
            has_gap = gap is not None and not pd.isna(gap)
            why = str(row.get("not_defined") or "not defined")
            cells = [
                str(cluster) if cluster is not None and defined else "",
                str(row["metric"]) if human else result.shown_name(str(row["metric"])),
                # A rater's reason lies in the tooltip: the column keeps the metrics' width.
                _fmt(row["value"]) if defined else ("not defined" if human else why),
                f"[{_fmt(low)}, {_fmt(high)}]" if defined and _given(low) else "",
                f"{gap:+.3f}" if has_gap else "",
            ]
            for c, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if c != 1:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if human:
                    _mark_human(cell, muted)
                elif defined and cluster is not None and cluster % 2 == 0:
                    cell.setBackground(shade)
                if c == 0 and cells[0]:
                    cell.setToolTip(CLUSTER_MEANING)
                if c == 1 and result.machine_note(str(row["metric"])):
                    cell.setToolTip(result.machine_note(str(row["metric"])))
                if c == 4 and has_gap:
                    cell.setToolTip(GAP_WORDS)
                if c == 2 and human and not defined:
                    cell.setToolTip(why)
                self.setItem(r, c, cell)
        if why_none:
            self._note_row(len(frame), why_none[:1].upper() + why_none[1:], muted)
        # No intervals (a preset that skips the bootstrap): no empty column either.
        ranking = result.ranking
        self.setColumnHidden(3, ranking is None or not ranking.intervals)
        self.setColumnHidden(4, result.humans is None or result.humans.one_rater is None)

    def _note_row(self, r: int, text: str, muted: QBrush) -> None:
        """One line from the Metric column on: why there is no human row. (Held by the
        stretching column: a resize-to-contents one would widen to the whole sentence.)"""
        self.row_kinds.append("note")
        cell = QTableWidgetItem(text)
        _mark_human(cell, muted)
        cell.setToolTip(text)
        self.setItem(r, 1, cell)
        self.setSpan(r, 1, 1, len(self.HEADERS) - 1)


def _given(value: Any) -> bool:
    return value is not None and not pd.isna(value)


def _mark_human(cell: QTableWidgetItem, muted: QBrush) -> None:
    """A human row reads as no metric: italic, in the palette's muted text colour."""
    font = QFont(cell.font())
    font.setItalic(True)
    cell.setFont(font)
    cell.setForeground(muted)
    cell.setToolTip(HUMAN_TIP)


def _combo(items: dict[str, str], tip: str, chars: int = 11) -> QComboBox:
    combo = QComboBox()
    for key, text in items.items():
        combo.addItem(text, key)
    combo.setToolTip(tip)
    compact_combo(combo, chars)
    return combo


class WhichMetricTab(QWidget):
    """The tab; `result` is the figures shown, `computing` whether a job is running."""

    computed = Signal()  # a result arrived and is shown
    stability_computed = Signal()  # a stopping signal arrived and is shown

    def __init__(self, controller: DashboardController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whichMetricTab")
        self.controller = controller
        self.result: WhichMetric | None = None
        self.job: JobHandle | None = None
        self._job_options: WhichMetricOptions | None = None
        self.stability: Stability | None = None
        self.stability_job: JobHandle | None = None
        self._stability_next: tuple[Path, WhichMetricOptions] | None = None
        self.generation = 0
        self._again = False
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RECOMPUTE_DEBOUNCE_MS)
        self._timer.timeout.connect(self.recompute)
        self._build()
        controller.loaded.connect(lambda: self.schedule(immediate=True))
        controller.live_changed.connect(self.schedule)
        controller.context.study_closed.connect(self._on_closed)

    # -- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        controls = self._build_controls()
        self._build_panels()
        self._build_layout(controls)
        for combo in (self.measure, self.grouping, self.test):
            combo.currentIndexChanged.connect(lambda _i: self._on_own_choice())
        self.preset.currentIndexChanged.connect(lambda _i: self._on_preset())
        self.attribute.currentIndexChanged.connect(lambda _i: self.schedule(immediate=True))
        self._show_message("Reading the study…")

    def _build_controls(self) -> QHBoxLayout:
        """The options row; the status and warning lines below it."""
        self.preset = _combo(PRESET_CHOICES, PRESET_TIP, chars=7)
        self.preset.setObjectName("whichMetricPreset")
        self.measure = _combo(MEASURE_CHOICES, "The measure the metrics are ranked by")
        self.grouping = _combo(
            GROUPING_CHOICES,
            "How outputs are grouped: all together, per source (a correlation per source, "
            "averaged), or per system (means per system)",
        )
        self.test = _combo(
            TEST_CHOICES,
            "The paired, seeded test behind the clusters (PERM-BOTH and BOOT-BOTH resample "
            "systems and sources together)",
        )
        self.attribute = QComboBox()
        self.attribute.setToolTip(ATTRIBUTE_TIP)
        compact_combo(self.attribute, 11)
        self.status = ElidedLabel()
        self.status.setObjectName("whichMetricStatus")
        controls = QHBoxLayout()
        controls.setSpacing(8)
        for label, widget in (
            ("Preset", self.preset),
            ("Rank by", self.measure),
            ("Grouping", self.grouping),
            ("Test", self.test),
            ("Categories", self.attribute),
        ):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        controls.addStretch(1)
        self.warning = QLabel()
        self.warning.setObjectName("whichMetricWarning")
        self.warning.setWordWrap(True)
        self.warning.hide()
        return controls

    def _build_panels(self) -> None:
        self.ranking = RankingTable()
        self.cluster_line = QLabel(CLUSTER_LINE)
        self.cluster_line.setWordWrap(True)
        self.cluster_line.setToolTip(CLUSTER_MEANING)
        self.cluster_line.setObjectName("mutedLabel")
        self.ranking_panel = Panel(
            "Metrics in significance clusters",
            self.ranking,
            formats=("csv",),
            name="which-metric-ranking",
        )
        self.ranking_panel.set_exporter("csv", lambda p: table_csv(self._frame("ranking"), p))
        self.pvalues = PValueTable()
        self.pvalue_panel = Panel(
            "p-values: the row's metric better than the column's (shaded: p ≤ α)",
            self.pvalues,
            formats=("csv",),
            name="which-metric-p-values",
        )
        self.pvalue_panel.set_exporter("csv", lambda p: table_csv(self._frame("p"), p))
        self.bars = CategoryBars()
        self.bars.plot.setMinimumHeight(60)
        self.bars_panel = Panel(
            "By category", self.bars, formats=("png", "svg", "csv"), name="which-metric-categories"
        )
        for fmt in ("png", "svg"):
            self.bars_panel.set_exporter(fmt, lambda p: export_plot(self.bars.plot, p))
        self.bars_panel.set_exporter("csv", lambda p: table_csv(self._frame("categories"), p))

        self.stability_view = StabilityView()
        self.stability_panel = Panel(
            "Is it time to stop rating?", self.stability_view, name="which-metric-stability"
        )
        # The verdict beside the question: a line of the panel's height saved for the ranking.
        self.stability_panel.add_header_widget(self.stability_view.verdict)
        self.stability_panel.setMaximumHeight(150)

    def _build_layout(self, controls: QHBoxLayout) -> None:
        # The ranking is what the tab is for: it takes the whole height on the left (every
        # cluster in sight on a 1024×640 screen); the p-values and the bars share the right.
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.pvalue_panel)
        split.addWidget(self.bars_panel)
        split.setSizes([300, 300])
        split.setChildrenCollapsible(False)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.ranking_panel)
        top.addWidget(split)
        top.setSizes([480, 500])
        self.columns = top
        self.split = split
        self._folded = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(controls)
        layout.addWidget(self.status)  # a line of its own: it names the n, never elided away
        layout.addWidget(self.warning)
        layout.addWidget(self.stability_panel)
        layout.addWidget(top, 1)
        layout.addWidget(self.cluster_line)

    def _frame(self, which: str) -> Any:
        if self.result is None or self.result.ranking is None:
            raise RuntimeError("no ranking to export yet")
        if which == "ranking":
            return self.result.ranking_frame()
        if which == "p":
            return self.result.p_values()
        return self.result.categories

    def _show_message(self, text: str) -> None:
        for panel in (
            self.ranking_panel,
            self.pvalue_panel,
            self.bars_panel,
            self.stability_panel,
        ):
            panel.show_message(text)

    # -- options ----------------------------------------------------------------------------
    def options(self) -> WhichMetricOptions:
        attribute = self.attribute.currentData()
        return WhichMetricOptions(
            dimension=self.controller.dimension or "meaning",
            measure=str(self.measure.currentData()),
            group_by=str(self.grouping.currentData()),
            test=str(self.test.currentData()),
            by=str(attribute) if attribute else None,
            preset=str(self.preset.currentData()) or None,
        )

    def _on_preset(self) -> None:
        """A preset sets the measure, grouping and test its task names (the engine's
        definition, through `with_preset`)."""
        chosen = with_preset(self.options(), str(self.preset.currentData()))
        for combo, key in (
            (self.measure, chosen.measure),
            (self.grouping, chosen.group_by),
            (self.test, chosen.test),
        ):
            combo.blockSignals(True)
            combo.setCurrentIndex(max(0, combo.findData(key)))
            combo.blockSignals(False)
        self.schedule(immediate=True)

    def _on_own_choice(self) -> None:
        """A measure, grouping or test of the user's own leaves the preset."""
        if self.preset.currentData() and preset_of(self.options()) is None:
            self.preset.blockSignals(True)
            self.preset.setCurrentIndex(self.preset.findData(""))
            self.preset.blockSignals(False)
        self.schedule(immediate=True)

    # -- computing --------------------------------------------------------------------------
    @property
    def computing(self) -> bool:
        return self.job is not None

    def schedule(self, *, immediate: bool = False) -> None:
        """Recompute soon: at once for a new study state or options, debounced for ratings."""
        if not self.isVisible():
            self._dirty = True  # computed when the tab is shown
            return
        if immediate:
            self._timer.start(0)
        elif not self._timer.isActive():
            self._timer.start(RECOMPUTE_DEBOUNCE_MS)

    def recompute(self) -> None:
        self._timer.stop()
        path = self.controller.path
        if path is None:
            return
        options = self.options()
        if self.job is not None:
            self._again = True
            if options != self._job_options:
                self.job.cancel()  # ranked by options no longer asked for: stop it
            return
        self._dirty = False
        generation = self.generation
        self._job_options = options

        def done(result: WhichMetric) -> None:
            # A cancelled job's result is dropped: the previous figures stay.
            cancelled = self.job is not None and self.job.ctx.cancelled
            if generation == self.generation and not cancelled:
                self._show(result)
                if result.ranking is not None:
                    self._start_stability(path, options)

        self.job = self.controller.runner.start(
            which_metric_job(path, options),
            title="Ranking the metrics",
            on_result=done,
            on_failed=self._on_failed,
            show_errors=False,
        )
        self.job.finished.connect(self._on_finished)
        self.job.progress.connect(lambda _p: self._show_status())
        self._show_status()

    def _start_stability(self, path: Path, options: WhichMetricOptions) -> None:
        """Measure the new ranking's stability; a run still going is for an older one."""
        if self.stability_job is not None:
            self._stability_next = (path, options)
            self.stability_job.cancel()
            return
        generation = self.generation

        def done(stability: Stability) -> None:
            if generation == self.generation and self._stability_next is None:
                self._show_stability(stability)

        def failed(failure: JobFailure) -> None:
            if generation == self.generation:
                self.stability_panel.show_message(f"{failure.title}: {failure.message}")

        self.stability_job = self.controller.runner.start(
            stability_job(path, options),
            title="Measuring how settled the ranking is",
            on_result=done,
            on_failed=failed,
            show_errors=False,
        )
        self.stability_job.finished.connect(self._on_stability_finished)
        self._show_status()

    def _on_stability_finished(self) -> None:
        self.stability_job = None
        later, self._stability_next = self._stability_next, None
        if later is not None:
            self._start_stability(*later)
        self._show_status()

    def _show_stability(self, stability: Stability) -> None:
        self.stability = stability
        self.stability_view.set_stability(stability)
        self.stability_panel.show_content()
        self.stability_computed.emit()

    def _on_failed(self, failure: JobFailure) -> None:
        self._show_message(f"{failure.title}: {failure.message}")

    def _on_finished(self) -> None:
        self.job = None
        if self._again:
            self._again = False
            self.recompute()
        self._show_status()

    def _on_closed(self) -> None:
        self.generation += 1
        self._timer.stop()
        self._stability_next = None
        if self.stability_job is not None:
            self.stability_job.cancel()
        self.result = None
        self.stability = None
        self._show_message("Reading the study…")
        self.status.clear()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._dirty or (self.result is None and self.job is None):
            self.schedule(immediate=True)

    # -- drawing ----------------------------------------------------------------------------
    def _show(self, result: WhichMetric) -> None:
        self.result = result
        self._fill_attributes(result.attributes)
        if result.ranking is None:
            self._show_message(result.message or "Nothing to rank yet.")
        else:
            self.ranking.set_result(result)
            self.pvalues.set_result(result)
            self.bars.set_result(result)
            for panel in (self.ranking_panel, self.pvalue_panel):
                panel.show_content()
            if self.stability is None:
                self.stability_panel.show_message("Measuring how settled the ranking is…")
            self._fold_categories(result.by is None)
            if result.by is not None:
                self.bars_panel.show_content()
        self._show_warning(result)
        self._show_status()
        self.computed.emit()

    def _show_warning(self, result: WhichMetric) -> None:
        """Small-n and all-negative rankings carry their warning in plain sight."""
        warning = result.ranking.warning if result.ranking is not None else None
        self.warning.setText(f"⚠ {warning}" if warning else "")
        self.warning.setVisible(bool(warning))

    def _fold_categories(self, fold: bool) -> None:
        """A study without item attributes has no bars to draw: the panel folds away and
        the ranking and the p-values take its room (given back once attributes appear);
        the Categories list says how to get them."""
        self.attribute.setToolTip(NO_ATTRIBUTES if fold else ATTRIBUTE_TIP)
        if fold == self._folded:
            return
        self._folded = fold
        self.bars_panel.setVisible(not fold)
        if not fold:
            total = sum(self.split.sizes())
            self.split.setSizes([total // 2, total - total // 2])

    def _fill_attributes(self, names: list[str]) -> None:
        combo = self.attribute
        current = combo.currentData() or (names[0] if names else None)
        combo.blockSignals(True)
        combo.clear()
        for name in names:
            combo.addItem(name, name)
        if not names:
            combo.addItem("none", None)
        combo.setCurrentIndex(max(0, combo.findData(current)))
        combo.setEnabled(bool(names))
        combo.blockSignals(False)
        if names and self.result is not None and self.result.options.by != combo.currentData():
            self.schedule(immediate=True)  # the first result tells which attributes exist

    def _show_status(self) -> None:
        parts = []
        r = self.result
        if r is not None and r.ranking is not None:
            rk = r.ranking
            preset = preset_of(r.options)
            upto = "up to " if rk.early_stop is not None else ""
            stop = " with MTME's early stopping" if rk.early_stop is not None else ""
            parts.append(
                (f"{PRESET_CHOICES[preset.name]} · " if preset is not None else "")
                + f"over {rk.over} · {TEST_CHOICES.get(rk.test, rk.test)}, "
                f"{upto}{rk.resamples:,} resamples{stop}, seed {rk.seed}, α = {rk.alpha:g}"
            )
        if self.computing:
            step = self.job.last_progress if self.job is not None else None
            parts.append(f"computing… ({step.message})" if step and step.message else "computing…")
        elif self.stability_job is not None:
            parts.append("measuring stability…")
        self.status.setText(" · ".join(parts))

    def apply_colors(self, colors: PlotColors) -> None:
        self.bars.apply_colors(colors)
        self.stability_view.apply_colors(colors)
        self.pvalues.apply_colors(colors)
        self.ranking.refresh_colors()

    def panels(self) -> list[Panel]:
        return [self.stability_panel, self.ranking_panel, self.pvalue_panel, self.bars_panel]
