"""The Disagreements view: the items whose raters differ most, and the lead's decision on
each (an adjudicated score, keep all, or exclude).

A thin skin: the list is `meaningbench.queries.disagreements`'s, read in the background;
a decision is `meaningbench.ops.disagreements.resolve_job`, which writes it to its own
label set, and the list is read again after it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.disagreements import resolve_job
from meaningbench.ops.labels import choose_job
from meaningbench.queries.disagreements import (
    Decision,
    Disagreement,
    DisagreementView,
    Resolution,
    decision_text,
    disagreements_job,
    ratings_text,
    spans_html,
)
from meaningbench.ui.widgets import table_cell
from meaningbench.ui.window_state import open_at

if TYPE_CHECKING:
    from meaningbench.ui.context import StudyContext
    from meaningbench.ui.workers import JobHandle

COLUMNS = ("Item", "Gap", "Ratings (lowest first)", "Settled", "Output")
PERCENTILE_TEXT = "study's 95th percentile"


class DisagreementsDialog(QDialog):
    def __init__(
        self, context: StudyContext, dimension: str = "meaning", parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("disagreementsDialog")
        self.setWindowTitle("Disagreements between raters")
        self.context = context
        self.dimension = dimension
        self.view: DisagreementView | None = None
        self.job: JobHandle | None = None
        layout = QVBoxLayout(self)
        layout.addLayout(self._threshold_row())
        self.summary = QLabel()
        self.summary.setObjectName("disagreementsSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self._build_table())
        split.addWidget(self._build_detail())
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout.addWidget(split, 1)
        self.use = QCheckBox("Analyses use these decisions")
        self.use.setObjectName("disagreementsInUse")
        self.use.setToolTip(
            "Make the decisions the label set the dashboard and every analysis read: an "
            "excluded item is left out, an adjudicated score replaces the raters' mean"
        )
        self.use.clicked.connect(self.use_decisions)
        layout.addWidget(self.use)
        open_at(self, QSize(980, 560))
        self.refresh()

    # -- building ---------------------------------------------------------------------
    def _threshold_row(self) -> QHBoxLayout:
        self.threshold = QDoubleSpinBox()
        self.threshold.setObjectName("disagreementsThreshold")
        self.threshold.setRange(-1, 1e6)
        self.threshold.setDecimals(1)
        self.threshold.setValue(-1)
        self.threshold.setSpecialValueText(PERCENTILE_TEXT)
        self.threshold.setToolTip(
            "List the items whose raters differ by more than this many points "
            "(lowest setting: the study's own 95th percentile of the gaps between two raters)"
        )
        self.show_button = QPushButton("Show")
        self.show_button.clicked.connect(self.refresh)
        row = QHBoxLayout()
        row.addWidget(QLabel("Raters differ by more than"))
        row.addWidget(self.threshold)
        row.addWidget(self.show_button)
        row.addStretch(1)
        return row

    def _build_table(self) -> QTableWidget:
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("disagreementsTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        head = self.table.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._show_selected)
        return self.table

    def _build_detail(self) -> QWidget:
        box = QWidget()
        v = QVBoxLayout(box)
        v.setContentsMargins(0, 0, 0, 0)
        self.detail = QLabel()
        self.detail.setObjectName("disagreementsDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.RichText)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        v.addWidget(self.detail, 1)
        self.score = QDoubleSpinBox()
        self.score.setObjectName("disagreementsScore")
        self.score.setDecimals(1)
        self.note = QLineEdit()
        self.note.setPlaceholderText("Why (kept with the decision)")
        self.adjudicate = QPushButton("Use this score")
        self.adjudicate.setToolTip("Your score replaces the raters' mean in analyses")
        self.adjudicate.clicked.connect(lambda: self.settle("score"))
        self.keep_all = QPushButton("Keep all")
        self.keep_all.setToolTip("The raters' ratings stand; their mean is the item's score")
        self.keep_all.clicked.connect(lambda: self.settle("keep-all"))
        self.exclude = QPushButton("Exclude")
        self.exclude.setToolTip("Leave the item out of analyses that read the decisions")
        self.exclude.clicked.connect(lambda: self.settle("exclude"))
        row = QHBoxLayout()
        row.addWidget(QLabel("Score"))
        row.addWidget(self.score)
        row.addWidget(self.adjudicate)
        row.addWidget(self.keep_all)
        row.addWidget(self.exclude)
        row.addWidget(self.note, 1)
        v.addLayout(row)
        self._enable_decisions(None)
        return box

    # -- reading ----------------------------------------------------------------------
    def threshold_value(self) -> float | None:
        value = self.threshold.value()
        return None if value < 0 else value

    def refresh(self) -> JobHandle | None:
        path = self.context.path
        if path is None or self.job is not None:
            return None
        self.job = self.context.runner.start(
            disagreements_job(path, self.dimension, self.threshold_value()),
            title="Reading the disagreements",
            on_result=self.show_view,
        )
        self.job.finished.connect(self._read)
        return self.job

    def _read(self) -> None:
        self.job = None

    def show_view(self, view: DisagreementView) -> None:
        chosen = self.selected()
        self.view = view
        report = view.report
        read_only = self.context.study is None or self.context.study.read_only
        self.use.setChecked(view.in_use)
        self.use.setEnabled((bool(report and report.n_resolved) or view.in_use) and not read_only)
        if report is None:
            self.summary.setText(view.why_not)
            self.table.setRowCount(0)
            self._show_selected()
            return
        self.score.setRange(*report.scale)
        n = len(report.items)
        self.summary.setText(
            f"{n} item{'s' if n != 1 else ''} whose raters differ by more than "
            f"{report.describe_threshold()}; {report.n_resolved} settled. Decisions go to "
            f"the label set “{report.label_set}”, never over the raters' ratings."
        )
        self.table.setRowCount(n)
        for row, d in enumerate(report.items):
            cells = (
                table_cell(str(d.item_id), right=True),
                table_cell(f"{d.gap:g}", right=True),
                table_cell(ratings_text(d)),
                table_cell(decision_text(d)),
                table_cell(" ".join(d.output.split())),
            )
            for column, cell in enumerate(cells):
                self.table.setItem(row, column, cell)
        ids = [d.item_id for d in report.items]
        self.table.selectRow(ids.index(chosen.item_id) if chosen and chosen.item_id in ids else 0)
        self._show_selected()

    def selected(self) -> Disagreement | None:
        if self.view is None or self.view.report is None:
            return None
        rows = self.table.selectionModel().selectedRows()
        items = self.view.report.items
        return items[rows[0].row()] if rows and rows[0].row() < len(items) else None

    def _show_selected(self) -> None:
        d = self.selected()
        self._enable_decisions(d)
        if d is None:
            self.detail.setText("")
            return
        self.detail.setText(
            f"<b>Item {d.item_id}</b>{f' · {d.system}' if d.system else ''} · gap {d.gap:g}"
            f"<br><b>Source:</b> {_escape(d.source)}<br><b>Output:</b> {_escape(d.output)}"
            f"{spans_html(d)}"
            + (f"<i>Settled: {decision_text(d)}</i>" if d.resolution is not None else "")
        )
        values = [r.value for r in d.ratings]
        self.score.setValue(
            d.resolution.score
            if d.resolution is not None and d.resolution.score is not None
            else sum(values) / len(values)
        )

    def _enable_decisions(self, d: Disagreement | None) -> None:
        read_only = self.context.study is None or self.context.study.read_only
        for button in (self.adjudicate, self.keep_all, self.exclude, self.score, self.note):
            button.setEnabled(d is not None and not read_only)

    # -- writing ----------------------------------------------------------------------
    def settle(self, decision: Decision) -> JobHandle | None:
        """Write the decision on the selected item; the list is read again after it."""
        d = self.selected()
        path = self.context.path
        if d is None or path is None:
            return None
        job = resolve_job(
            path,
            d.item_id,
            decision,
            score=self.score.value() if decision == "score" else None,
            dimension=self.dimension,
            note=self.note.text().strip() or None,
        )
        handle = self.context.runner.start(
            job, title=f"Settling item {d.item_id}", on_result=self._settled
        )
        return handle

    def use_decisions(self, on: bool) -> JobHandle | None:
        """Make the decisions' label set the one analyses read (off: the published labels)."""
        path = self.context.path
        report = self.view.report if self.view is not None else None
        if path is None or report is None:
            return None
        name = report.label_set if on else None
        return self.context.runner.start(
            choose_job(path, name), title="Choosing the labels analyses read"
        )

    def _settled(self, done: Resolution) -> None:
        self.note.clear()
        self.refresh()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
