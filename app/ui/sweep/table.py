"""The sweep table as a widget: one row per configuration, the best one highlighted, the
configurations without scores saying why."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from meaningbench.analysis.sweep_table import SweepRow, SweepTable

COLUMNS = ("Model", "Metric", "Layer", "Variant", "n", "Pearson", "95% CI", "Spearman",
           "95% CI", "Kendall", "95% CI", "RMSE", "MAE", "")  # fmt: skip


def _num(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "–"


def _ci(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if all(math.isfinite(v) for v in ci) else "–"


def row_cells(row: SweepRow) -> list[str]:
    e = row.entry
    head = [e.model, e.metric, str(e.layer), e.variant]
    if row.note:
        return [*head, "–", row.note, "", "", "", "", "", "", "", ""]
    mark = "★ best" if row.best else ("runner-up" if row.runner_up else "")
    return [
        *head, str(row.n), _num(row.pearson), _ci(row.pearson_ci), _num(row.spearman),
        _ci(row.spearman_ci), _num(row.kendall), _ci(row.kendall_ci), _num(row.rmse),
        _num(row.mae), mark,
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
                self.setItem(r, c, cell)
            if row.note:
                self.setSpan(r, 5, 1, len(COLUMNS) - 5)
