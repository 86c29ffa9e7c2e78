"""The Dashboard page: metric-versus-human correlations, live, with sanity checks,
agreement and rater QC, and exports of every plot and table and of the whole study.

`item_activated(item_id)` is emitted when a scatter point is clicked; the window opens
that item on the Compare page (`open_in_compare`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries.dashboard_jobs import ReportRequest, report_job
from meaningbench.queries.tables import table_csv, table_latex
from meaningbench.ui.dashboard.controller import DashboardController
from meaningbench.ui.dashboard.correlations_tab import CorrelationsTab, select_data
from meaningbench.ui.dashboard.data_quality import DataQualityPanel
from meaningbench.ui.dashboard.heatmap import CorrelationHeatmap, heat_frame_for
from meaningbench.ui.dashboard.panel import FORMATS, Panel
from meaningbench.ui.dashboard.plots import PlotColors, export_plot
from meaningbench.ui.dashboard.quality_panel import QualityPanel
from meaningbench.ui.dashboard.sanity_panel import SanityPanel
from meaningbench.ui.dashboard.which_metric_tab import WhichMetricTab
from meaningbench.ui.icons import themed_icon
from meaningbench.ui.widgets import ElidedLabel, HeadingLabel, compact_combo
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.ui.context import StudyContext

SCALES = {False: "Raw mean ratings", True: "Per-annotator z-scores"}
GROUPINGS = {"items": "Resample items", "sources": "Resample source groups"}
HEAT_METHODS = {"pearson": "Pearson", "spearman": "Spearman"}


def _combo(items: dict[Any, str], tip: str) -> QComboBox:
    combo = QComboBox()
    for key, text in items.items():
        combo.addItem(text, key)
    combo.setToolTip(tip)
    return combo


class DashboardPage(QWidget):
    item_activated = Signal(int)

    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dashboardPage")
        self.context = context
        self.controller = DashboardController(context, self)
        self.last_report: Path | None = None
        self._heat_stale = False  # scores landed since the heatmap was drawn

        header = self._build_header()

        self.correlations = CorrelationsTab(self.controller)
        self._build_heat_panel()
        self.sanity = SanityPanel(self.controller)
        self.quality = QualityPanel()
        self.data_quality = DataQualityPanel(context)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.correlations, "Correlations")
        self.tabs.addTab(self.heat_panel, "Metric × metric")
        self.tabs.addTab(self.sanity, "Sanity checks")
        self.tabs.addTab(self.quality, "Agreement and rater QC")
        self.tabs.addTab(self.data_quality, "Data quality")
        self.which_metric = WhichMetricTab(self.controller)
        self.tabs.addTab(self.which_metric, "Which metric")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 10)
        layout.setSpacing(8)
        layout.addLayout(header)
        layout.addWidget(self.tabs, 1)
        self._build_connections(context)
        self._show_loading()
        if context.study is not None:
            self.controller.open()

    def _build_header(self) -> QHBoxLayout:
        heading = HeadingLabel("Dashboard", 1.4)
        heading.setObjectName("pageHeading")
        self.dimension = QComboBox()
        self.dimension.setToolTip("The human rating dimension the metrics are compared with")
        self.scale = _combo(SCALES, "Human item score: mean of the raw ratings or of z-scores")
        self.groups = _combo(GROUPINGS, "What the bootstrap resamples for the 95% intervals")
        for combo in (self.dimension, self.scale, self.groups):
            compact_combo(combo, 9)
        self.status = ElidedLabel()
        self.status.setObjectName("mutedLabel")
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setIcon(themed_icon("export"))
        self.export_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self)
        menu.addAction("Study report (HTML)…", self.export_report_dialog)
        menu.addAction("Every plot and table to a folder…", self.export_all_dialog)
        self.export_button.setMenu(menu)
        header = QHBoxLayout()
        header.setSpacing(8)
        header.addWidget(heading)
        header.addSpacing(12)
        for label, widget in (
            ("Dimension", self.dimension),
            ("Scores", self.scale),
            ("Intervals", self.groups),
        ):
            header.addWidget(QLabel(label))
            header.addWidget(widget)
        header.addWidget(self.status, 1)
        header.addWidget(self.export_button)
        return header

    def _build_heat_panel(self) -> None:
        self.heatmap = CorrelationHeatmap()
        self.heat_method = _combo(HEAT_METHODS, "Correlation between the metrics' scores")
        self.heat_panel = Panel(
            "Metric × metric correlation",
            self.heatmap,
            formats=("png", "svg", "csv", "tex"),
            name="metric-correlations",
        )
        self.heat_panel.add_header_widget(self.heat_method)
        for fmt in ("png", "svg"):
            self.heat_panel.set_exporter(fmt, lambda p: export_plot(self.heatmap.plot, p))
        self.heat_panel.set_exporter("csv", lambda p: table_csv(self._heat_frame(), p))
        self.heat_panel.set_exporter(
            "tex",
            lambda p: table_latex(self._heat_frame(), p, caption="Metric × metric correlation"),
        )
        self.heatmap.plot.customContextMenuRequested.connect(
            lambda pos: self.heat_panel.show_context_menu(self.heatmap.plot, pos)
        )

    def _build_connections(self, context: StudyContext) -> None:
        c = self.controller
        c.loaded.connect(self._on_loaded)
        c.scores_changed.connect(self._on_scores)
        c.live_changed.connect(self.correlations.draw)
        c.intervals_changed.connect(self._on_intervals)
        c.quality_changed.connect(self._on_quality)
        c.busy_changed.connect(lambda _b: self._show_status())
        c.failed.connect(lambda text: self.status.setText(text))
        context.study_closed.connect(self._on_closed)
        self.correlations.item_activated.connect(self.item_activated)
        self.dimension.currentIndexChanged.connect(self._on_dimension)
        self.scale.currentIndexChanged.connect(lambda _i: c.set_z(bool(self.scale.currentData())))
        self.groups.currentIndexChanged.connect(
            lambda _i: c.set_groups(str(self.groups.currentData()))
        )
        self.heat_method.currentIndexChanged.connect(lambda _i: self._draw_heatmap())
        self.tabs.currentChanged.connect(self._on_tab)

    # -- drawing -------------------------------------------------------------------------
    def _show_loading(self) -> None:
        self.correlations.show_message("Reading the study…")
        self.heat_panel.show_message("Reading the study…")
        self.quality.set_results(None, None)

    def _on_closed(self) -> None:
        self._show_loading()
        self.sanity.show_cached()
        self.status.clear()

    def _on_loaded(self) -> None:
        c = self.controller
        if not c.state.loaded:
            return
        self.dimension.blockSignals(True)
        self.dimension.clear()
        for name in c.dimensions:
            self.dimension.addItem(name, name)
        select_data(self.dimension, c.dimension)
        self.dimension.blockSignals(False)
        self.correlations.set_metric_names(list(c.state.metric_names))
        self.correlations.scatter.set_texts(c.state.items())
        self._draw_heatmap()
        self.sanity.show_cached()
        self._show_status()

    def _on_scores(self) -> None:
        """Scores landed: a new run's column joins the names; the heatmap follows, now when
        it is on screen, else when it is shown or exported."""
        self.correlations.set_metric_names(list(self.controller.state.metric_names))
        self._heat_stale = True
        if self.tabs.currentWidget() is self.heat_panel:
            self._draw_heatmap()

    def _draw_heatmap(self) -> None:
        self._heat_stale = False
        frame = self.controller.state.heatmap(str(self.heat_method.currentData()))
        if frame is None or len(frame.columns) < 2:
            self.heat_panel.show_message("Needs two metric runs or more.")
            return
        series = self.correlations.series
        self.heatmap.set_frame(
            heat_frame_for(frame, series.names if series else None),
            str(self.heat_method.currentData()),
        )
        self.heat_panel.show_content()

    def _on_tab(self, index: int) -> None:
        if self.tabs.widget(index) is self.heat_panel and self.controller.state.loaded:
            self._draw_heatmap()  # in the bars' current order

    def _heat_frame(self) -> Any:
        if self.heatmap.frame is None:
            raise RuntimeError("no metric correlations to export yet")
        return self.heatmap.frame

    def _on_intervals(self) -> None:
        self.correlations.draw()
        self._show_status()

    def _on_quality(self) -> None:
        c = self.controller
        self.quality.set_results(c.agreement, c.qc, c.machines)
        self.correlations.draw()  # the human ceiling comes with the agreement

    def _show_status(self) -> None:
        c = self.controller
        table = c.table()
        if not c.state.loaded or table is None:
            self.status.setText("Reading the study…" if c.busy else "")
            return
        # The number of metric runs is the status bar's to say; said twice, the two copies
        # disagree for a moment whenever a run finishes.
        parts = [f"{table.n_items:,} rated items"]
        sets = c.state.label_sets
        if sets:  # which published or fixed labels stand in for unrated items
            parts.append("labels: " + ", ".join(sets))
        if c.boot is None or c.intervals_stale:
            parts.append("intervals updating…")
        else:
            parts.append(f"95% intervals: {c.boot.n_boot:,} resamples of {c.boot.unit}")
        self.status.setText(" · ".join(parts))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # A text-size change (Ctrl++ / Ctrl+-) restyles the plots as a palette change does:
        # their tick and label fonts are copies of the application font.
        if event.type() in (
            QEvent.Type.PaletteChange,
            QEvent.Type.ApplicationPaletteChange,
            QEvent.Type.FontChange,
            QEvent.Type.ApplicationFontChange,
        ):
            colors = PlotColors.from_palette(self.palette())
            self.correlations.apply_colors(colors)
            self.heatmap.apply_colors(colors)
            self.sanity.chart.apply_colors(colors)
            self.which_metric.apply_colors(colors)
        super().changeEvent(event)

    # -- options ---------------------------------------------------------------------------
    def _on_dimension(self) -> None:
        name = self.dimension.currentData()
        if name is not None and name != self.controller.dimension:
            self._show_loading()
            self.controller.set_dimension(str(name))

    # -- exports ---------------------------------------------------------------------------
    def panels(self) -> list[Panel]:
        t = self.correlations
        q = self.quality
        return [
            t.bars_panel,
            t.scatter_panel,
            t.stats_panel,
            self.heat_panel,
            self.sanity.panel,
            self.sanity.chart_panel,
            q.summary_panel,
            q.loo_panel,
            q.qc_panel,
            *self.which_metric.panels(),
        ]

    def export_all(self, folder: str | Path) -> list[Path]:
        """Every plot (PNG, SVG) and table (CSV, LaTeX) that has something to show."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if self._heat_stale:
            self._draw_heatmap()
        written = []
        for panel in self.panels():
            if self._hidden_on_purpose(panel) or panel.showing_message:
                continue
            if not panel.export_button.isEnabled():
                continue
            for fmt in panel.exporters:
                path = folder / f"{panel.name}{FORMATS[fmt][2]}"
                panel.export(fmt, str(path))
                written.append(path)
        return written

    def _hidden_on_purpose(self, panel: Panel) -> bool:
        """Hidden because it has nothing to show, not because its tab is not the current one.

        The tab widget hides every tab but the current one, so `isHidden()` alone would
        leave the heatmap (a tab of its own) out of "Export all" unless it was on screen.
        """
        for i in range(self.tabs.count()):
            tab = self.tabs.widget(i)
            if panel is tab:
                return False
            if tab is not None and tab.isAncestorOf(panel):
                return not panel.isVisibleTo(tab)
        return panel.isHidden()

    def export_all_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Save every plot and table to")
        if folder:
            written = self.export_all(folder)
            self.status.setText(f"{counted(len(written), 'file')} written to {folder}")

    def report_request(self, dest: str | Path) -> ReportRequest:
        c = self.controller
        shown = self.sanity.shown
        cached = shown or next(iter(c.sanity.values()), None)
        column = self.correlations.metric_combo.currentData()
        return ReportRequest(
            dest=Path(dest),
            dimension=c.dimension or "meaning",
            z=c.z,
            groups=c.groups,
            scatter_column=str(column) if column is not None else None,
            sanity=cached,
        )

    def export_report(self, dest: str | Path) -> Any:
        """Write the HTML report as a job in the window's runner; returns its handle."""
        path = self.controller.path
        if path is None:
            return None

        def done(written: Path) -> None:
            self.last_report = written
            self.status.setText(f"Report written to {written}")

        return self.context.runner.start(
            report_job(path, self.report_request(dest)), title="Study report", on_result=done
        )

    def export_report_dialog(self) -> None:
        name = (self.context.path.stem if self.context.path else "study") + "-report.html"
        dest, _ = QFileDialog.getSaveFileName(self, "Study report", name, "HTML (*.html)")
        if dest:
            self.export_report(dest if dest.lower().endswith(".html") else dest + ".html")

    # -- page hooks ----------------------------------------------------------------------
    def page_shown(self) -> None:
        self.controller.set_active(True)

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt override
        if not event.spontaneous():
            self.controller.set_active(False)
        super().hideEvent(event)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        self.controller.set_active(True)
        super().showEvent(event)

    def save_state(self) -> dict[str, Any]:
        t = self.correlations
        return {
            "tab": self.tabs.currentIndex(),
            "statistic": t.statistic.currentData(),
            "sort": t.sort.currentData(),
            "z": bool(self.scale.currentData()),
            "groups": self.groups.currentData(),
            "heat": self.heat_method.currentData(),
            "dimension": self.controller.dimension,
        }

    def restore_state(self, state: dict[str, Any]) -> None:
        t = self.correlations
        select_data(t.statistic, state.get("statistic"))
        select_data(t.sort, state.get("sort"))
        select_data(self.scale, state.get("z") in (True, "true", 1))
        select_data(self.groups, state.get("groups"))
        select_data(self.heat_method, state.get("heat"))
        tab = state.get("tab")
        if isinstance(tab, int) and 0 <= tab < self.tabs.count():
            self.tabs.setCurrentIndex(tab)
        dimension = state.get("dimension")
        if isinstance(dimension, str) and dimension != self.controller.dimension:
            self.controller.set_dimension(dimension)

    def shutdown(self) -> None:
        if self.sanity.handle is not None:
            self.sanity.handle.cancel()
        self.controller.shutdown()


def open_in_compare(window: Any, item_id: int) -> bool:
    """Show the item on the window's Compare page (what a click on a scatter point does)."""
    if window is None or not window.show_page("compare"):
        return False
    page = window.page("compare")
    show = getattr(page, "show_item", None)
    if callable(show):
        show(int(item_id))
        return True
    return False
