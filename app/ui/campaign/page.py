"""The Campaign page: the lead's view of a round of rater kits.

Per rater: kits sent and returned, items done of assigned, the controls passed, r with
the other raters, seconds per item, the last return. Per item: how many of its k ratings
are in. The figures are `meaningbench campaign`'s (`meaningbench.queries.campaign`); the
"Make top-up kits…" button starts `meaningbench.ops.campaign.top_up_job` from its dialog;
"Disagreements…" opens the review of the items whose raters differ most
(`meaningbench.ui.campaign.disagreements`), "Rater QC…" each rater's checks over time
(`meaningbench.ui.campaign.qc_view`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries.campaign import (
    ITEM_FILTERS,
    RATER_COLUMNS,
    Campaign,
    campaign_job,
    coverage_summary,
    filter_text,
    has_kits,
    items_shown,
    rater_cells,
    when,
)
from meaningbench.runtime.changes import StudyChanges
from meaningbench.ui.widgets import ElidedLabel, HeadingLabel, table_cell
from meaningbench.ui.wording import counted

if TYPE_CHECKING:
    from meaningbench.ui.campaign.disagreements import DisagreementsDialog
    from meaningbench.ui.campaign.qc_view import RaterQCDialog
    from meaningbench.ui.campaign.top_up import TopUpDialog
    from meaningbench.ui.context import StudyContext
    from meaningbench.ui.workers import JobHandle

NO_KITS = (
    "No rater kits yet. Make one file per rater with <b>File ▸ Make rater kits…</b> "
    "(or <code>meaningbench kit STUDY --raters ana,ben --out kits</code>), send each rater "
    "their file, and collect the returned files with <b>File ▸ Collect rater kits…</b>. "
    "This page then follows each rater's progress and quality, and how many of its ratings "
    "each item has."
)
RATER_TIPS = (
    "",
    "Kits made for this rater, one per round: the first and each top-up (a kit made "
    "again for the same round counts once)",
    "Rounds whose kit came back with ratings in it",
    "Items rated out of the items in the rater's queue (hidden controls included)",
    "Share of identical controls (an output that is its source) rated high enough",
    "Share of unrelated controls (an output of another source) rated low enough",
    "Pearson r with the mean of the other raters on shared items (leave one out)",
    "Median seconds spent per item",
    "When the rater's last kit came back (your clock)",
)
ITEM_COLUMNS = ("Item", "Ratings in", "Rated by", "Dataset", "Original")
# The raters' table grows with its rows up to this many, then scrolls.
RATER_ROWS = 8
# Changes that move the figures: ratings, queues and kit records (settings), new items.
MOVES_FIGURES = ("ratings", "items", "settings", "everything")


def _table(columns: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    return table


class _NumberCell(QTableWidgetItem):
    """A cell that sorts by its number, not its text (9 before 10, "2 of 3" before "10 of 3")."""

    def __init__(self, text: str, number: float) -> None:
        super().__init__(text)
        self.number = number
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _NumberCell):
            return self.number < other.number
        return super().__lt__(other)


class CampaignPage(QWidget):
    def __init__(self, context: StudyContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("campaignPage")
        self.context = context
        self.figures: Campaign | None = None
        self.stale = True
        self.dialog: TopUpDialog | None = None
        self.disagreements: DisagreementsDialog | None = None
        self.qc_view: RaterQCDialog | None = None
        self.job: JobHandle | None = None  # the figures being read
        self._read_again = False
        self._generation = 0  # a result read for a study since closed is dropped

        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 10, 14, 10)
        layout.setSpacing(8)
        layout.addLayout(self._build_header())
        self.empty = QLabel(NO_KITS)
        self.empty.setObjectName("campaignEmpty")
        self.empty.setWordWrap(True)
        self.empty.setTextFormat(Qt.TextFormat.RichText)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.empty)
        self.raters_box = self._build_raters()
        layout.addWidget(self.raters_box)
        self.items_box = self._build_items()
        layout.addWidget(self.items_box, 1)

        context.study_changed.connect(self._on_study_changed)
        context.study_opened.connect(lambda _s: self._mark_stale())
        context.study_closed.connect(self._clear)
        self.refresh()

    # -- building ---------------------------------------------------------------------
    def _build_header(self) -> QHBoxLayout:
        heading = HeadingLabel("Campaign", 1.4)
        heading.setObjectName("pageHeading")
        self.status = ElidedLabel()
        self.status.setObjectName("mutedLabel")
        self.top_up_button = QPushButton("Make top-up kits…")
        self.top_up_button.setToolTip(
            "Kits of the items still short of their ratings, for the raters you choose"
        )
        self.top_up_button.clicked.connect(self.show_top_up_dialog)
        self.disagreements_button = QPushButton("Disagreements…")
        self.disagreements_button.setToolTip(
            "The items whose raters differ most, to settle: a score, keep all, or exclude"
        )
        self.disagreements_button.clicked.connect(self.show_disagreements)
        self.qc_button = QPushButton("Rater QC…")
        self.qc_button.setToolTip(
            "Each rater's checks over stretches of their ratings, so a careless stretch shows"
        )
        self.qc_button.clicked.connect(self.show_qc_view)
        header = QHBoxLayout()
        header.setSpacing(8)
        header.addWidget(heading)
        header.addSpacing(12)
        header.addWidget(self.status, 1)
        header.addWidget(self.qc_button)
        header.addWidget(self.disagreements_button)
        header.addWidget(self.top_up_button)
        return header

    def _build_raters(self) -> QGroupBox:
        box = QGroupBox("Raters")
        self.raters = _table(RATER_COLUMNS)
        self.raters.setObjectName("campaignRaters")
        for column, tip in enumerate(RATER_TIPS):
            header = self.raters.horizontalHeaderItem(column)
            if header is not None and tip:
                header.setToolTip(tip)
        head = self.raters.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setStretchLastSection(True)
        v = QVBoxLayout(box)
        v.addWidget(self.raters)
        return box

    def _build_items(self) -> QGroupBox:
        box = QGroupBox("Items")
        self.coverage = QLabel()
        self.coverage.setObjectName("campaignCoverage")
        self.complete_bar = QProgressBar()
        self.complete_bar.setObjectName("campaignComplete")
        self.complete_bar.setTextVisible(True)
        self.complete_bar.setFixedWidth(self.fontMetrics().horizontalAdvance("0" * 24))
        self.filter = QComboBox()
        for key, text in ITEM_FILTERS:
            self.filter.addItem(text, key)
        self.filter.setToolTip("Which items the table lists")
        # Its texts carry counts read later: the box grows with them instead of eliding.
        self.filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.filter.currentIndexChanged.connect(lambda _i: self._fill_items())
        top = QHBoxLayout()
        top.addWidget(self.complete_bar)
        top.addWidget(self.coverage, 1)
        top.addWidget(QLabel("Show"))
        top.addWidget(self.filter)
        self.items = _table(ITEM_COLUMNS)
        self.items.setObjectName("campaignItems")
        head = self.items.horizontalHeader()
        head.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        head.setStretchLastSection(True)
        # A click on a heading sorts; until then the rows keep the filter's order.
        self.items.setSortingEnabled(True)
        head.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        v = QVBoxLayout(box)
        v.addLayout(top)
        v.addWidget(self.items, 1)
        return box

    # -- reading ----------------------------------------------------------------------
    def _on_study_changed(self, changes: StudyChanges) -> None:
        if any(getattr(changes, name) for name in MOVES_FIGURES):
            self._mark_stale()

    def _mark_stale(self) -> None:
        """Read again now when on screen, else when next shown (a rating elsewhere must
        not pay for a page nobody looks at)."""
        self.stale = True
        if self.isVisible():
            self.refresh()

    def page_shown(self) -> None:
        if self.stale:
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.page_shown()

    def refresh(self) -> None:
        """Read the figures in the background; a change while they are read reads again."""
        path = self.context.path
        if path is None:
            self._clear()
            return
        self.stale = False
        if self.job is not None:
            self._read_again = True
            return
        generation = self._generation

        def shown(figures: Campaign) -> None:
            study = self.context.study
            if generation == self._generation and study is not None:
                self.figures = figures
                self._show(figures, study.read_only)

        self.job = self.context.runner.start(
            campaign_job(path), title="Reading the campaign", on_result=shown
        )
        self.job.finished.connect(self._on_read)

    def _on_read(self) -> None:
        self.job = None
        if self._read_again:
            self._read_again = False
            self.refresh()

    def _clear(self) -> None:
        self._generation += 1
        self._read_again = False
        self.figures = None
        self.stale = True
        self.raters.setRowCount(0)
        self.items.setRowCount(0)
        self.status.setText("")
        self.coverage.setText("")
        self.top_up_button.setEnabled(False)

    def _show(self, figures: Campaign, read_only: bool) -> None:
        n_items = len(figures.items)
        ratings = "rating" if figures.k == 1 else "ratings"
        # Without a rater nothing is assigned: no k, no item "0 of 1" short of it.
        self.status.setText(
            f"{counted(len(figures.raters), 'rater')} · {counted(n_items, 'item')} · k = "
            f"{figures.k} {ratings} per item ({figures.dimension})"
            if figures.raters
            else f"No kits yet · {counted(n_items, 'item')}"
        )
        self.empty.setVisible(not has_kits(figures))
        self.raters_box.setVisible(bool(figures.raters))
        self.items_box.setVisible(bool(figures.raters))
        self._fill_raters(figures)
        complete = n_items - len(figures.short)
        self.complete_bar.setRange(0, max(1, n_items))
        self.complete_bar.setValue(complete)
        self.complete_bar.setFormat(f"{complete} of {n_items} complete")
        self.coverage.setText(coverage_summary(figures))
        for index, (key, _words) in enumerate(ITEM_FILTERS):
            self.filter.setItemText(index, filter_text(figures, key))
        self._fill_items()
        self.top_up_button.setEnabled(bool(figures.raters and figures.short) and not read_only)
        self.top_up_button.setToolTip(
            "The study is read-only: top-up kits are recorded in it"
            if read_only
            else "Kits of the items still short of their ratings, for the raters you choose"
            if figures.raters and figures.short
            else "Every item has its ratings: no top-up is needed"
            if figures.raters
            else "No rater has items yet: make their kits first"
        )
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.show_figures(figures)

    def _fill_raters(self, figures: Campaign) -> None:
        self.raters.setRowCount(len(figures.raters))
        for row, rater in enumerate(figures.raters):
            for column, text in enumerate(rater_cells(rater)):
                cell = table_cell(text, right=0 < column < len(RATER_COLUMNS) - 1)
                if column == 1 and rater.last_sent:
                    cell.setToolTip(f"Last kit made {when(rater.last_sent)}")
                self.raters.setItem(row, column, cell)
        self._fit_raters(len(figures.raters))

    def _fit_raters(self, rows: int) -> None:
        """As tall as its rows (up to `RATER_ROWS`): the items below get the rest."""
        table = self.raters
        height = table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth()
        height += table.verticalHeader().defaultSectionSize() * max(1, min(rows, RATER_ROWS))
        if table.horizontalScrollBar().isVisible():
            height += table.horizontalScrollBar().sizeHint().height()
        table.setFixedHeight(height)

    def _fill_items(self) -> None:
        figures = self.figures
        if figures is None:
            self.items.setRowCount(0)
            return
        shown = items_shown(figures, str(self.filter.currentData()))
        self.items.setUpdatesEnabled(False)
        self.items.setSortingEnabled(False)  # rows stay where they are put while filled
        self.items.setRowCount(len(shown))
        for row, c in enumerate(shown):
            cells = (
                _NumberCell(str(c.item_id), c.item_id),
                _NumberCell(f"{c.ratings} of {figures.k}", c.ratings),
                table_cell(", ".join(c.raters) or "–"),
                table_cell(c.dataset),
                table_cell(" ".join(c.source.split())),
            )
            for column, cell in enumerate(cells):
                self.items.setItem(row, column, cell)
        self.items.setSortingEnabled(True)  # sorted again by the heading clicked, if any
        self.items.setUpdatesEnabled(True)

    # -- writing ----------------------------------------------------------------------
    def show_top_up_dialog(self) -> TopUpDialog | None:
        """The top-up dialog for the figures on screen (None: nothing is short)."""
        from meaningbench.ui.campaign.top_up import TopUpDialog

        if self.figures is None or not self.figures.short or self.context.path is None:
            return None
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = TopUpDialog(self.context, self.figures, self)
        self.dialog.show()
        return self.dialog

    def show_disagreements(self) -> DisagreementsDialog | None:
        """The Disagreements view of the study open (None: no study)."""
        from meaningbench.ui.campaign.disagreements import DisagreementsDialog

        if self.context.path is None:
            return None
        if self.disagreements is not None:
            self.disagreements.close()
        dimension = self.figures.dimension if self.figures is not None else "meaning"
        self.disagreements = DisagreementsDialog(self.context, dimension, self)
        self.disagreements.show()
        return self.disagreements

    def show_qc_view(self) -> RaterQCDialog | None:
        """The Rater QC view of the study open (None: no study)."""
        from meaningbench.ui.campaign.qc_view import RaterQCDialog

        if self.context.path is None:
            return None
        if self.qc_view is not None:
            self.qc_view.close()
        dimension = self.figures.dimension if self.figures is not None else "meaning"
        self.qc_view = RaterQCDialog(self.context, dimension, self)
        self.qc_view.show()
        return self.qc_view
