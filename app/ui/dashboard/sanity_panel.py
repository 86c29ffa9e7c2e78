"""The sanity checks tab: pass rates at each threshold, run on demand, cached per session.

The checks score fresh pairs with every metric the study has run — neural ones load their
models — so they run only when asked, as a job in the window's runner (its progress and
cancel button show in the status bar), and each setting's result is kept for the session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries.dashboard import SanityTable
from meaningbench.queries.dashboard_jobs import SanityRequest, sanity_job
from meaningbench.queries.tables import table_csv, table_latex
from meaningbench.runtime import Progress
from meaningbench.ui.dashboard.formats import sanity_display
from meaningbench.ui.dashboard.panel import Panel
from meaningbench.ui.dashboard.plots import export_plot
from meaningbench.ui.dashboard.sanity_chart import SanityMeans
from meaningbench.ui.dashboard.tables import BandedHeader, FrameTable
from meaningbench.ui.icons import themed_icon
from meaningbench.ui.widgets import ElidedLabel
from meaningbench.ui.wording import counted
from meaningbench.ui.workers import JobHandle

if TYPE_CHECKING:
    from meaningbench.ui.dashboard.controller import DashboardController

MIN_ROWS = 5  # rows of pass rates the table shows at least, whatever the screen
TABLE_SHARE = 0.6  # of the splitter's height, at most, before the chart's
MODES = {"wordsoup": "Word soup", "sampled": "Sampled real sentences"}
NOTE = (
    "Each source s is scored against itself (identical pairs: a metric that preserves "
    "meaning gives round(score) ≥ 95 … = 100) and against a text u that shares no meaning "
    "with it (unrelated pairs: ≤ 5 … = 0). Cells are the share of pairs passing each "
    "threshold, as in the MeaningBERT study's tables."
)


class SanityPanel(QWidget):
    finished = Signal()

    def __init__(self, controller: DashboardController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.handle: JobHandle | None = None
        self.shown: SanityTable | None = None
        controls = self._build_controls()
        self._build_table_panel()
        self._build_chart_panel()
        note = QLabel(NOTE)
        note.setObjectName("mutedLabel")
        note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        # The user decides how the height is shared between the table and the chart.
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.panel)
        self.splitter.addWidget(self.chart_panel)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(note)
        layout.addStretch(0)  # takes the room the table does not use while the chart is hidden
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(lambda: self.handle is not None and self.handle.cancel())
        self.mode.currentIndexChanged.connect(lambda _i: self.show_cached())
        self.count.valueChanged.connect(lambda _v: self.show_cached())
        self._set_running(False)
        self.show_cached()

    def _build_controls(self) -> QHBoxLayout:
        self.mode = QComboBox()
        for key, text in MODES.items():
            self.mode.addItem(text, key)
        self.mode.setToolTip(
            "Unrelated texts: words of the study outside the source (word soup), or another "
            "source under the lexical-overlap bar (ROUGE < 0.20, BLEU < 20)."
        )
        self.count = QSpinBox()
        self.count.setRange(10, 100_000)
        self.count.setSingleStep(50)
        self.count.setValue(200)
        self.count.setSuffix(" sources")
        self.count.setToolTip(
            "How many distinct sources to check (drawn at random with a fixed seed); "
            "all of them when the study has fewer"
        )
        self.run_button = QPushButton(themed_icon("run"), "Run sanity checks")
        self.run_button.setObjectName("runSanity")
        self.cancel_button = QPushButton(themed_icon("cancel"), "Cancel")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(260)
        self.progress.setTextVisible(True)
        # "Not run — <run>: <error>; …" can name every run: shortened, the whole in its tooltip.
        self.status = ElidedLabel()
        self.status.setObjectName("mutedLabel")
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Unrelated texts:"))
        controls.addWidget(self.mode)
        controls.addWidget(self.count)
        controls.addWidget(self.run_button)
        controls.addWidget(self.progress)
        controls.addWidget(self.cancel_button)
        controls.addWidget(self.status, 1)
        return controls

    def _build_table_panel(self) -> None:
        self.table = FrameTable(banded=True, fit_rows=20)
        self.panel = Panel("Sanity checks: pass rates", self.table, formats=("csv", "tex"))
        self.panel.name = "sanity-checks"
        self.panel.set_exporter("csv", lambda p: table_csv(self._require(), p))
        self.panel.set_exporter(
            "tex",
            lambda p: table_latex(
                self._require(), p, caption="Sanity checks: pass rates", digits=3
            ),
        )
        self.table.customContextMenuRequested.connect(
            lambda pos: self.panel.show_context_menu(self.table.viewport(), pos)
        )
        self.panel.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

    def _build_chart_panel(self) -> None:
        self.chart = SanityMeans()
        # With a dozen metrics the bars need more height than the tab has: scroll.
        self.chart_scroll = QScrollArea()
        self.chart_scroll.setWidgetResizable(True)
        self.chart_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.chart_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chart_scroll.setWidget(self.chart)
        self.chart_panel = Panel(
            "Mean score of identical and unrelated pairs",
            self.chart_scroll,
            formats=("png", "svg"),
            name="sanity-means",
        )
        for fmt in ("png", "svg"):
            self.chart_panel.set_exporter(fmt, lambda p: export_plot(self.chart.plot, p))
        self.chart.plot.customContextMenuRequested.connect(
            lambda pos: self.chart_panel.show_context_menu(self.chart.plot, pos)
        )

    def request(self) -> SanityRequest:
        return SanityRequest(str(self.mode.currentData()), int(self.count.value()))

    def _require(self) -> SanityTable:
        if self.shown is None:
            raise RuntimeError("no sanity checks to export yet")
        return self.shown

    def show_cached(self) -> None:
        table = self.controller.sanity.get(self.request().key)
        self.shown = table
        self.run_button.setText("Run again" if table is not None else "Run sanity checks")
        if table is None:
            self.panel.show_message(
                "Not run yet in this session. “Run sanity checks” scores identical and "
                "unrelated pairs built from the study's sources with every metric the study "
                "has run (neural metrics load their models)."
            )
            self.panel.export_button.setEnabled(False)
            self.chart_panel.hide()
            return
        self.show_table(table)

    def show_table(self, table: SanityTable) -> None:
        self.shown = table
        self.run_button.setText("Run again")
        frame, formats, bands = sanity_display(table)
        header = self.table.horizontalHeader()
        if isinstance(header, BandedHeader):
            header.set_bands(bands)  # first: the header's height counts in the table's
        self.table.set_frame(frame, formats, "metric")
        errors = [f"{k}: {r.error}" for k, r in table.results.items() if r.error]
        fallback = max((r.n_fallback for r in table.results.values()), default=0)
        notes = []
        if errors:
            notes.append("Not run — " + "; ".join(errors))
        if fallback:
            notes.append(f"{counted(fallback, 'source')} had no unrelated sentence: word soup used")
        self.status.setText(" · ".join(notes))
        self.panel.export_button.setEnabled(True)
        self.chart.set_table(table)
        self.chart_panel.setVisible(bool(self.chart.means))
        if len(frame):
            self.panel.show_content()
        else:
            self.panel.show_message("The study has no metric runs to check.")
        self._share_height(len(frame))

    def _share_height(self, rows: int) -> None:
        """A few rows of the table at least, on any screen, and its rows (up to its own
        limit) before the chart: the splitter keeps the heights it gave the message that
        was shown before the table, and would leave the table one row."""
        shown = min(rows, MIN_ROWS)
        bar = self.table.horizontalScrollBar().sizeHint().height()
        self.table.setMinimumHeight(self.table.content_height(shown) + bar if shown else 0)
        total = sum(self.splitter.sizes())
        if total <= 0 or not self.chart_panel.isVisibleTo(self):
            return
        title = self.panel.sizeHint().height() - self.table.sizeHint().height()
        want = title + self.table.content_height(rows) + bar
        share = max(self.panel.minimumSizeHint().height(), min(want, int(total * TABLE_SHARE)))
        self.splitter.setSizes([share, total - share])

    def run(self) -> None:
        path = self.controller.path
        if path is None or self.handle is not None:
            return
        request = self.request()
        runner = self.controller.context.runner

        def done(table: SanityTable) -> None:
            if self.controller.path == path:
                self.controller.sanity[request.key] = table
                if self.request() == request:
                    self.show_table(table)

        self.handle = runner.start(sanity_job(path, request), title="Sanity checks", on_result=done)
        self.handle.progress.connect(self._on_progress)
        self.handle.finished.connect(self._on_finished)
        self.progress.setRange(0, 0)
        self._set_running(True)
        self.status.setText("Building pairs and scoring…")

    def _on_progress(self, p: Progress) -> None:
        if p.total:
            self.progress.setRange(0, int(p.total))
            self.progress.setValue(int(p.done))
        self.status.setText(p.message)

    def _on_finished(self) -> None:
        handle, self.handle = self.handle, None
        self._set_running(False)
        if handle is not None and handle.outcome == "cancelled":
            self.status.setText("Cancelled.")
        elif handle is not None and handle.outcome == "failed" and handle.failure is not None:
            self.status.setText(f"Failed: {handle.failure.message}")
        self.finished.emit()

    def _set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setVisible(running)
        self.progress.setVisible(running)
        self.mode.setEnabled(not running)
        self.count.setEnabled(not running)
