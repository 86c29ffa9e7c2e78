"""The comparison table: one row per system output of a source, sortable by any number.

Columns: system, the output as a word diff against the source, the mean human rating, one
column per rater (and per published aggregate), one per metric column of the study. Cells
hold the number as their sort key, so sorting is numeric and empty cells sort last.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor

from meaningbench.queries.compare import SourceComparison, SystemRow
from meaningbench.queries.word_diff import diff_counts, diff_html, inline_diff

HTML_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
ITEM_ID_ROLE = Qt.ItemDataRole.UserRole + 3

Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Column:
    key: str  # "system" | "output" | "mean" | "rater:<name>" | "agg:<name>" | "metric:<col>"
    title: str
    tooltip: str = ""

    @property
    def numeric(self) -> bool:
        return self.key == "mean" or self.key.split(":", 1)[0] in ("rater", "agg", "metric")


def _tint(value: float, dark: bool) -> QColor:
    """A faint warm-to-cool tint for a 0–100 value: the eye finds high and low cells."""
    t = min(1.0, max(0.0, value / 100.0))
    low, high = QColor("#f4a582"), QColor("#92c5de")
    c = QColor.fromRgbF(
        low.redF() + (high.redF() - low.redF()) * t,
        low.greenF() + (high.greenF() - low.greenF()) * t,
        low.blueF() + (high.blueF() - low.blueF()) * t,
    )
    c.setAlpha(70 if dark else 95)
    return c


class SystemsModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.comparison: SourceComparison | None = None
        self.columns: list[Column] = []
        self.dark = False
        self._html: list[str] = []
        self._diff_counts: list[tuple[int, int, int]] = []

    def set_comparison(self, comparison: SourceComparison | None, *, dark: bool = False) -> None:
        self.beginResetModel()
        self.comparison = comparison
        self.dark = dark
        self.columns = []
        self._html, self._diff_counts = [], []
        if comparison is not None:
            self.columns = [
                Column("system", "System"),
                Column("output", "Output (word diff against the source)"),
                Column(
                    "mean",
                    f"Mean {comparison.dimension}",
                    f"Mean current {comparison.dimension} rating of the human raters "
                    "(or of the published labels when there are none)",
                ),
            ]
            self.columns += [
                Column(f"rater:{r}", r, f"{r}'s {comparison.dimension} rating")
                for r in comparison.raters
            ]
            self.columns += [
                Column(f"agg:{a}", a, f"Published aggregate label ({a})")
                for a in comparison.aggregates
            ]
            self.columns += [
                Column(f"metric:{m}", m, f"{m} (0–100, higher = more meaning preserved)")
                for m in comparison.metrics
            ]
            for row in comparison.rows:
                ops = inline_diff(comparison.source, row.output)
                self._html.append(diff_html(ops, dark=dark))
                self._diff_counts.append(diff_counts(ops))
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        if parent.isValid() or self.comparison is None:
            return 0
        return len(self.comparison.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def row_at(self, row: int) -> SystemRow:
        assert self.comparison is not None
        return self.comparison.rows[row]

    def value(self, row: SystemRow, column: Column) -> float | str | None:
        kind, _, name = column.key.partition(":")
        if kind == "system":
            return row.system
        if kind == "output":
            return row.output
        if kind == "mean":
            return row.mean
        if kind == "rater":
            return row.ratings.get(name)
        if kind == "agg":
            return row.aggregate.get(name)
        return row.metrics.get(name)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.comparison is None:
            return None
        row = self.row_at(index.row())
        column = self.columns[index.column()]
        value = self.value(row, column)
        if role == Qt.ItemDataRole.DisplayRole:
            if column.numeric:
                return "—" if value is None else f"{float(value):.1f}"
            return value
        if role == HTML_ROLE and column.key == "output":
            return self._html[index.row()]
        if role == SORT_ROLE:
            if column.numeric:
                return -math.inf if value is None else float(value)
            return str(value).casefold()
        if role == ITEM_ID_ROLE:
            return row.item_id
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and column.numeric and value is not None:
            return _tint(float(value), self.dark)
        if role == Qt.ItemDataRole.ToolTipRole:
            if column.key == "output":
                kept, added, deleted = self._diff_counts[index.row()]
                return f"{kept} word(s) kept, {added} added, {deleted} deleted"
            if column.key == "mean" and row.ratings:
                return f"mean of {row.n_raters} rater(s)"
            return column.tooltip or None
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.columns[section].tooltip or None
        return None


class SystemsProxy(QSortFilterProxyModel):
    """Numeric sort with empty cells last in both directions."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)

    def lessThan(self, left: Index, right: Index) -> bool:
        a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        if isinstance(a, float) and isinstance(b, float):
            missing_a, missing_b = a == -math.inf, b == -math.inf
            if missing_a or missing_b:
                # Keep missing values at the bottom whichever way the column is sorted:
                # the largest when ascending, the smallest when descending.
                descending = self.sortOrder() == Qt.SortOrder.DescendingOrder
                if missing_a and missing_b:
                    return False
                return descending if missing_a else not descending
            return a < b
        return str(a) < str(b)
