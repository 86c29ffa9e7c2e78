"""The sweep table as a widget: one row per configuration, the best one highlighted, the
configurations without scores saying why."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from meaningbench.analysis.sweep_table import SweepRow, SweepTable

COLUMNS = ("Model", "Metric", "Layer", "Variant", "n", "Pearson [95% CI]",
           "Spearman [95% CI]", "Kendall [95% CI]", "RMSE 0–1", "MAE 0–1", "")  # fmt: skip
MARK = len(COLUMNS) - 1  # the column that marks the best and the runner-up


def _num(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "–"


def _with_ci(value: float, ci: tuple[float, float]) -> str:
    if not all(math.isfinite(v) for v in ci):
        return _num(value)
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def row_cells(row: SweepRow) -> list[str]:
    e = row.entry
    head = [e.model, e.metric, str(e.layer), e.variant]
    if row.note:
        return [*head, "–", row.note, "", "", "", "", ""]
    mark = "★ best" if row.best else ("runner-up" if row.runner_up else "")
    return [
        *head, str(row.n), _with_ci(row.pearson, row.pearson_ci),
        _with_ci(row.spearman, row.spearman_ci), _with_ci(row.kendall, row.kendall_ci),
        _num(row.rmse), _num(row.mae), mark,
    ]  # fmt: skip


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

    def show_table(self, table: SweepTable) -> None:
        self.clearSpans()
        self.setRowCount(len(table.rows))
        for r, row in enumerate(table.rows):
            cells = row_cells(row)
            for c, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if c >= 4 and not row.note:
                    cell.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                if row.best:
                    font = QFont(cell.font())
                    font.setBold(True)
                    cell.setFont(font)
                if row.note and c == 5:
                    cell.setToolTip(row.note)
                if c == 0:
                    cell.setToolTip(text)
                self.setItem(r, c, cell)
            if row.note:
                self.setSpan(r, 5, 1, len(COLUMNS) - 5)
            if row.best:
                self.selectRow(r)
                self.scrollToItem(self.item(r, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
