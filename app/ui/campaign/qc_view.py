"""The Rater QC view: each rater's checks over their consecutive stretches of ratings, so a
careless stretch shows instead of being averaged away over the whole queue.

A plot draws the chosen check (controls passed, seconds per item, r with the others,
ratings on one value) over each rater's sequence, one line per rater, with the study's
threshold as a dashed line and the stretches that cross a threshold ringed. A table
under it gives each rater's whole-queue figures, their practice answers and the stretches
flagged. A thin skin: the figures are `meaningbench.queries.rater_timeline`'s, read in the
background."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from meaningbench.core.wording import counted
from meaningbench.queries.rater_timeline import (
    MEASURES,
    STRETCH,
    Measure,
    RaterTimeline,
    TimelineView,
    figure_text,
    span_text,
    stretch_tooltip,
    timeline_job,
)
from meaningbench.ui.dashboard.plots import PlotColors, axis_label, make_plot, style_plot
from meaningbench.ui.sweep.curves import SERIES_COLORS, legend_html
from meaningbench.ui.widgets import table_cell
from meaningbench.ui.window_state import open_at

if TYPE_CHECKING:
    from meaningbench.ui.context import StudyContext
    from meaningbench.ui.workers import JobHandle

# The summary table grows with its rows up to this many, then scrolls.
TABLE_ROWS = 6
COLUMNS = ("Rater", "Ratings", "Practice", "Controls", "s/item", "r", "One value", "Flagged")
TIPS = (
    "",
    "Ratings on the dimension, hidden controls included",
    "Practice answers within the expected range, of those given",
    "Identical and unrelated controls passed, of those rated (whole queue)",
    "Median seconds per item (whole queue)",
    "Pearson r with the mean of the other raters on shared items (leave one out)",
    "Share of the ratings on their most frequent value (straight-lining)",
    "Stretches that cross one of the study's thresholds (hover for why)",
)


def points(rater: RaterTimeline, measure: Measure) -> tuple[list[float], list[float]]:
    """(x, y) of one rater's line: x the middle of each stretch in their sequence, y the
    measure (NaN where the stretch has no figure: a gap in the line)."""
    xs, ys = [], []
    for s in rater.stretches:
        figure = getattr(s, measure.key)
        xs.append((s.first + s.last) / 2)
        ys.append(figure.value * measure.scale if figure.value is not None else math.nan)
    return xs, ys


def flagged_text(rater: RaterTimeline) -> str:
    flagged = rater.flagged
    if not flagged:
        return "none"
    return f"{len(flagged)} of {len(rater.stretches)}: " + ", ".join(
        span_text(s).removeprefix("items ") for s in flagged
    )


class RaterQCDialog(QDialog):
    def __init__(
        self, context: StudyContext, dimension: str = "meaning", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("raterQCDialog")
        self.setWindowTitle("Rater QC over time")
        self.context = context
        self.dimension = dimension
        self.view: TimelineView | None = None
        self.job: JobHandle | None = None
        self._again = False
        self.colors = PlotColors.from_palette()
        layout = QVBoxLayout(self)
        layout.addLayout(self._controls_row())
        self.summary = QLabel()
        self.summary.setObjectName("raterQCSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        # The table is as tall as its rows (up to `TABLE_ROWS`): at 1024×640 a splitter's
        # share cut the third rater off; the plot takes what is left.
        layout.addWidget(self._build_plot(), 1)
        layout.addWidget(self._build_table())
        open_at(self, QSize(980, 600))
        self.refresh()

    # -- building ---------------------------------------------------------------------
    def _controls_row(self) -> QHBoxLayout:
        self.measure = QComboBox()
        self.measure.setObjectName("raterQCMeasure")
        for m in MEASURES:
            self.measure.addItem(m.label, m.key)
        self.measure.setToolTip("The check the plot draws over each rater's sequence")
        self.measure.currentIndexChanged.connect(lambda _i: self.draw())
        self.stretch = QSpinBox()
        self.stretch.setObjectName("raterQCStretch")
        self.stretch.setRange(5, 500)
        self.stretch.setValue(STRETCH)
        self.stretch.setSuffix(" ratings")
        self.stretch.setToolTip(
            "How many consecutive ratings, in the order the rater gave them, make a stretch"
        )
        self.stretch.editingFinished.connect(self.refresh)
        row = QHBoxLayout()
        row.addWidget(QLabel("Plot"))
        row.addWidget(self.measure)
        row.addSpacing(12)
        row.addWidget(QLabel("Stretches of"))
        row.addWidget(self.stretch)
        row.addStretch(1)
        return row

    def _build_plot(self) -> QWidget:
        box = QWidget()
        v = QVBoxLayout(box)
        v.setContentsMargins(0, 0, 0, 0)
        self.plot = make_plot()
        self.plot.setObjectName("raterQCPlot")
        self.plot.setMinimumSize(300, 160)
        self.plot.getPlotItem().showGrid(x=True, y=True, alpha=0.25)
        self.legend = QLabel()
        self.legend.setObjectName("raterQCLegend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        v.addWidget(self.plot, 1)
        v.addWidget(self.legend)
        style_plot(self.plot, self.colors)
        return box

    def _build_table(self) -> QTableWidget:
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("raterQCTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        for column, tip in enumerate(TIPS):
            header = self.table.horizontalHeaderItem(column)
            if header is not None and tip:
                header.setToolTip(tip)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self.draw)
        return self.table

    # -- reading ----------------------------------------------------------------------
    def refresh(self) -> JobHandle | None:
        path = self.context.path
        if path is None:
            return None
        if self.job is not None:
            self._again = True
            return None
        self.job = self.context.runner.start(
            timeline_job(path, self.dimension, self.stretch.value()),
            title="Reading the raters' stretches",
            on_result=self.show_view,
        )
        self.job.finished.connect(self._read)
        return self.job

    def _read(self) -> None:
        self.job = None
        if self._again:
            self._again = False
            self.refresh()

    def show_view(self, view: TimelineView) -> None:
        self.view = view
        timeline = view.timeline
        if timeline is None:
            self.summary.setText(view.why_not)
            self.table.setRowCount(0)
            self.draw()
            return
        flagged = [(r.rater, s) for r in timeline.raters for s in r.flagged]
        raters = len(timeline.raters)
        self.summary.setText(
            f"{raters} rater{'s' if raters != 1 else ''} ({timeline.dimension}), each in "
            f"stretches of {counted(timeline.stretch, 'rating')} in the order given. "
            + (
                f"{len(flagged)} stretch{'es' if len(flagged) != 1 else ''} cross a "
                "threshold: " + "; ".join(f"{n} {span_text(s)}" for n, s in flagged) + "."
                if flagged
                else "No stretch crosses a threshold."
            )
        )
        self._fill_table(timeline.raters)
        self.draw()

    def _fill_table(self, raters: tuple[RaterTimeline, ...]) -> None:
        self.table.setRowCount(len(raters))
        for row, r in enumerate(raters):
            w = r.whole
            practice = (
                f"{r.practice_passed} of {r.practice_answered}" if r.practice_answered else "–"
            )
            cells = (
                table_cell(r.rater),
                table_cell(f"{r.n_ratings:,}", right=True),
                table_cell(practice, right=True),
                table_cell(figure_text(w.controls, "controls"), right=True),
                table_cell(figure_text(w.seconds, "seconds"), right=True),
                table_cell(figure_text(w.agreement, "agreement"), right=True),
                table_cell(figure_text(w.same_share, "same_share"), right=True),
                table_cell(flagged_text(r)),
            )
            cells[-1].setToolTip("\n\n".join(stretch_tooltip(s) for s in r.flagged))
            for column, cell in enumerate(cells):
                self.table.setItem(row, column, cell)
        self._fit_table(len(raters))

    def _fit_table(self, rows: int) -> None:
        table = self.table
        height = table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth()
        height += table.verticalHeader().defaultSectionSize() * max(1, min(rows, TABLE_ROWS))
        if table.horizontalScrollBar().isVisible():
            height += table.horizontalScrollBar().sizeHint().height()
        table.setFixedHeight(height)

    # -- drawing ----------------------------------------------------------------------
    def chosen_measure(self) -> Measure:
        key = self.measure.currentData()
        return next((m for m in MEASURES if m.key == key), MEASURES[0])

    def draw(self) -> None:
        """The chosen check over each rater's sequence; the rater selected in the table
        drawn thicker."""
        item = self.plot.getPlotItem()
        item.clear()
        self.colors = colors = PlotColors.from_palette()
        style_plot(self.plot, colors)
        timeline = self.view.timeline if self.view is not None else None
        if timeline is None:
            self.legend.setText("")
            return
        measure = self.chosen_measure()
        axis_label(self.plot, "left", measure.label, colors)
        axis_label(self.plot, "bottom", "Ratings given, in the rater's order", colors)
        rows = self.table.selectionModel().selectedRows()
        chosen = timeline.raters[rows[0].row()].rater if rows else None
        entries = []
        for n, rater in enumerate(timeline.raters):
            color = QColor(SERIES_COLORS[n % len(SERIES_COLORS)])
            xs, ys = points(rater, measure)
            if not any(math.isfinite(y) for y in ys):
                entries.append((color.name(), f"{rater.rater} (no figure)"))
                continue
            entries.append((color.name(), rater.rater))
            width = 3.4 if rater.rater == chosen else 1.8
            item.plot(
                xs, ys, pen=pg.mkPen(color, width=width), connect="finite", symbol="o",
                symbolSize=7, symbolBrush=pg.mkBrush(color),
                symbolPen=pg.mkPen(colors.background, width=1),
            )  # fmt: skip
            self._ring_flagged(rater, measure, xs, ys)
        self._threshold_line(measure)
        self.legend.setText(legend_html(entries, marks=len(entries)) + self._legend_marks())
        item.enableAutoRange()

    def _ring_flagged(
        self, rater: RaterTimeline, measure: Measure, xs: list[float], ys: list[float]
    ) -> None:
        """A ring round each stretch that crosses a threshold, wherever its point is."""
        ring = [
            (x, y)
            for s, x, y in zip(rater.stretches, xs, ys, strict=True)
            if s.flagged and math.isfinite(y)
        ]
        if ring:
            self.plot.getPlotItem().addItem(
                pg.ScatterPlotItem(
                    [x for x, _ in ring],
                    [y for _, y in ring],
                    symbol="o",
                    size=17,
                    brush=pg.mkBrush(None),
                    pen=pg.mkPen(self.colors.accent, width=2),
                )  # fmt: skip
            )

    def _threshold_line(self, measure: Measure) -> None:
        limits = dict(self.view.thresholds) if self.view is not None else {}
        if measure.threshold in limits:
            y = limits[measure.threshold] * measure.scale
            pen = pg.mkPen(self.colors.text, width=1.2, style=Qt.PenStyle.DashLine)
            self.plot.getPlotItem().addItem(pg.InfiniteLine(pos=y, angle=0, pen=pen))

    def _legend_marks(self) -> str:
        # Apart from the raters' colours: a ring in the accent, the line in the text's.
        ring, line = self.colors.accent.name(), self.colors.text.name()
        return (
            f"&nbsp;&nbsp; <span style='color:{line}'>╌╌</span>&nbsp;the study's threshold"
            f"&nbsp;&nbsp; <span style='color:{ring}'>◯</span>&nbsp;a stretch that crosses one"
        )

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # A theme switch: pyqtgraph keeps its own colours, so the plot is drawn again.
        kinds = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
        drawn = getattr(self, "table", None) is not None  # not while it is being built
        if event.type() in kinds and drawn and PlotColors.from_palette() != self.colors:
            self.draw()
        super().changeEvent(event)
