"""The sweep table as a widget: one row per configuration, the best one highlighted, the
configurations without scores saying why."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from meaningbench.queries.sweep import SweepRow, SweepTable

# What a configuration is and how it ranks come first, so that a narrow window shows them
# without scrolling: the intervals (wide cells) come last and are in each value's tooltip.
COLUMNS = ("Model", "Metric", "Layer", "Variant", "Rank", "Pearson", "Spearman", "Kendall",
           "RMSE 0–1", "MAE 0–1", "n", "Pearson 95% CI", "Spearman 95% CI",
           "Kendall 95% CI")  # fmt: skip
MARK = COLUMNS.index("Rank")  # the column that marks the best and the runner-up
FIRST_VALUE = MARK + 1
NOTE = FIRST_VALUE  # where a configuration without scores says why, across the rest


def _num(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "–"


def _ci(ci: tuple[float, float]) -> str:
    if not all(math.isfinite(v) for v in ci):
        return "–"
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def row_cells(row: SweepRow) -> list[str]:
    e = row.entry
    head = [e.model, e.metric, str(e.layer), e.variant]
    if row.note:
        return [*head, "", row.note, *[""] * (len(COLUMNS) - NOTE - 1)]
    mark = "★ best" if row.best else ("runner-up" if row.runner_up else "")
    return [
        *head, mark, _num(row.pearson), _num(row.spearman), _num(row.kendall),
        _num(row.rmse), _num(row.mae), str(row.n), _ci(row.pearson_ci),
        _ci(row.spearman_ci), _ci(row.kendall_ci),
    ]  # fmt: skip


def cell_tip(row: SweepRow, column: int) -> str:
    """A value's tooltip: the value with its interval."""
    name = COLUMNS[column]
    ci = {"Pearson": row.pearson_ci, "Spearman": row.spearman_ci, "Kendall": row.kendall_ci}
    value = {"Pearson": row.pearson, "Spearman": row.spearman, "Kendall": row.kendall}
    if name not in ci:
        return ""
    return f"{name} {_num(value[name])}, 95% CI {_ci(ci[name])}"


class SweepTableWidget(QTableWidget):
    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setObjectName("sweepTable")
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # Model names (hub ids, folders) can be long: that column is elided, not widened.
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.setColumnWidth(0, 150)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header.setStretchLastSection(True)
        self._best_row: int | None = None
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        # The best row stays in view when the window changes size (a table filled in a
        # wide window and shown in a small one would hide the row it is about).
        super().resizeEvent(event)
        best = self._best_row
        if best is not None and best < self.rowCount():
            mark = self.item(best, MARK)
            if mark is not None:
                self.scrollToItem(mark, QAbstractItemView.ScrollHint.EnsureVisible)

    def show_table(self, table: SweepTable) -> None:
        self._best_row = next((r for r, row in enumerate(table.rows) if row.best), None)
        # One model (the usual sweep of one encoder's layers): the verdict names it, and
        # its column would take the room of the numbers on a narrow screen.
        self.setColumnHidden(0, len({row.entry.model for row in table.rows}) <= 1)
        self.clearSpans()
        self.setRowCount(len(table.rows))
        for r, row in enumerate(table.rows):
            cells = row_cells(row)
            for c, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if c > MARK and not row.note:
                    cell.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if row.best:
                    font = QFont(cell.font())
                    font.setBold(True)
                    cell.setFont(font)
                if row.note and c == NOTE:
                    cell.setToolTip(row.note)
                elif c == 0:
                    cell.setToolTip(text)
                elif not row.note and cell_tip(row, c):
                    cell.setToolTip(cell_tip(row, c))
                self.setItem(r, c, cell)
            if row.note:
                self.setSpan(r, NOTE, 1, len(COLUMNS) - NOTE)
            if row.best:
                self.selectRow(r)
                mark = self.item(r, MARK)
                if mark is not None:
                    self.scrollToItem(mark, QAbstractItemView.ScrollHint.PositionAtCenter)
                self.horizontalScrollBar().setValue(0)  # the configuration's own columns
