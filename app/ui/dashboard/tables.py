"""Result tables (pandas frames) in a QTableView: formatting, banded headers.

The frame's index is the first column (metric or annotator). Numbers keep full precision
in the tooltip and in exports; the cells show them rounded, rates as percentages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QSizePolicy,
    QStyle,
    QStyleOptionHeader,
    QTableView,
    QWidget,
)

PASS = QColor("#2e8540")
FAIL = QColor("#c0392b")
# On a dark base the light theme's green and red fall below WCAG AA (3.7:1 and 3.1:1).
PASS_DARK = QColor("#6cc48a")
FAIL_DARK = QColor("#ff8a7a")


def status_color(text: str, dark: bool) -> QColor | None:
    """The colour of a pass/fail cell, readable on the theme's base colour."""
    if text == "pass":
        return PASS_DARK if dark else PASS
    if text == "fail":
        return FAIL_DARK if dark else FAIL
    return None


@dataclass(frozen=True)
class Fmt:
    """How a column shows: float, int, auto (int when whole), percent (of a 0–1 rate),
    p (p-value), text, num (text aligned as a number), status (pass / fail in colour)."""

    kind: str = "float"
    digits: int = 3
    label: str | None = None


def format_value(value: Any, fmt: Fmt) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if fmt.kind in ("text", "status") or isinstance(value, str):
        return str(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v) or math.isinf(v):
        return "–"
    if fmt.kind == "int" or (fmt.kind == "auto" and v.is_integer() and abs(v) < 1e15):
        return f"{int(round(v)):,}"
    if fmt.kind == "percent":
        return f"{100 * v:.{fmt.digits}f} %"
    if fmt.kind == "p":
        return f"{v:.1e}" if 0 < v < 10**-fmt.digits else f"{v:.{fmt.digits}f}"
    return f"{v:.{fmt.digits}f}"


class FrameModel(QStandardItemModel):
    """A frame's cells as standard items, formatted once per update.

    A view asks for every role of every visible cell on each repaint; held in Qt's own
    items those questions never reach Python (a live refresh repaints this table after
    every rating).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.frame = pd.DataFrame()
        self.formats: dict[str, Fmt] = {}
        self.index_label = ""

    def set_frame(
        self, frame: pd.DataFrame, formats: dict[str, Fmt] | None = None, index_label: str = ""
    ) -> None:
        """New contents; a frame of the same rows and columns only rewrites its cells."""
        same = (
            frame.shape == self.frame.shape
            and list(frame.columns) == list(self.frame.columns)
            and list(frame.index) == list(self.frame.index)
        )
        self.frame = frame
        self.formats = formats or {}
        self.index_label = index_label or str(frame.index.name or "")
        fmts = [Fmt("text")] + [self.formats.get(str(c), Fmt()) for c in frame.columns]
        columns = [list(frame.index)] + [frame.iloc[:, j].tolist() for j in range(frame.shape[1])]
        if not same:
            self.clear()
            self.setRowCount(len(frame))
            self.setColumnCount(len(fmts))
            labels = [self.index_label] + [
                fmt.label or str(col) for fmt, col in zip(fmts[1:], frame.columns, strict=True)
            ]
            self.setHorizontalHeaderLabels(labels)
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for c, (values, fmt) in enumerate(zip(columns, fmts, strict=True)):
            align = left if c == 0 or fmt.kind in ("text", "status") else right
            numeric = c > 0 and fmt.kind not in ("text", "num", "status")
            for r, value in enumerate(values):
                text = format_value(value, fmt)
                item = self.item(r, c)
                if item is None:
                    item = QStandardItem()
                    item.setEditable(False)
                    item.setTextAlignment(align)
                    self.setItem(r, c, item)
                if item.text() != text:
                    item.setText(text)
                    if numeric:
                        item.setToolTip(repr(value))
                    if fmt.kind == "status":
                        dark = QApplication.palette().base().color().lightness() < 128
                        color = status_color(text, dark)
                        # No colour: the palette's text colour (an empty brush paints black).
                        item.setData(color, Qt.ItemDataRole.ForegroundRole)

    def fmt(self, column: int) -> Fmt:
        if column == 0:
            return Fmt("text")
        return self.formats.get(str(self.frame.columns[column - 1]), Fmt())

    def raw(self, row: int, column: int) -> Any:
        if column == 0:
            return self.frame.index[row]
        return self.frame.iat[row, column - 1]


class BandedHeader(QHeaderView):
    """A horizontal header with group labels spanning columns, over the column labels."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.bands: list[tuple[int, int, str]] = []  # (first section, last section, text)
        self.setSectionsClickable(False)

    def set_bands(self, bands: list[tuple[int, int, str]]) -> None:
        self.bands = bands
        self.updateGeometry()
        self.viewport().update()

    def _in_band(self, section: int) -> bool:
        return any(first <= section <= last for first, last, _ in self.bands)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        size = super().sizeHint()
        if self.bands:
            size.setHeight(size.height() * 2)
        return size

    def paintSection(self, painter: QPainter, rect: QRect, section: int) -> None:  # noqa: N802
        if self.bands and self._in_band(section):
            half = rect.height() // 2
            rect = QRect(rect.left(), rect.top() + half, rect.width(), rect.height() - half)
        super().paintSection(painter, rect, section)

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        if not self.bands:
            return
        painter = QPainter(self.viewport())
        half = self.height() // 2
        for first, last, text in self.bands:
            if last >= self.count():
                continue
            x0 = self.sectionViewportPosition(first)
            x1 = self.sectionViewportPosition(last) + self.sectionSize(last)
            opt = QStyleOptionHeader()
            self.initStyleOption(opt)
            opt.rect = QRect(x0, 0, x1 - x0, half)
            opt.text = text
            opt.textAlignment = Qt.AlignmentFlag.AlignCenter
            opt.position = QStyleOptionHeader.SectionPosition.OnlyOneSection
            self.style().drawControl(QStyle.ControlElement.CE_Header, opt, painter, self)
        painter.end()


class FrameTable(QTableView):
    """A read-only table of a result frame, sized to its contents."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        banded: bool = False,
        fit_rows: int = 0,
        min_rows: int = 0,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("dashboardTable")
        self.fit_rows = fit_rows  # > 0: as tall as its rows, up to this many, no taller
        # > 0: never shorter than this many rows (or all, when fewer): a short window
        # scrolls the page rather than squeezing the table to a row.
        self.min_rows = min_rows
        self.model_ = FrameModel(self)
        self.setModel(self.model_)
        if banded:
            self.setHorizontalHeader(BandedHeader(self))
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.setAlternatingRowColors(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(False)
        self.horizontalHeader().setStretchLastSection(False)
        self.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def set_frame(
        self, frame: pd.DataFrame, formats: dict[str, Fmt] | None = None, index_label: str = ""
    ) -> None:
        old = self.model_.frame
        self.model_.set_frame(frame, formats, index_label)
        if old.shape != frame.shape or list(old.columns) != list(frame.columns):
            self._spread()  # a live refresh changes numbers only: the widths stay
        if self.fit_rows:
            self.setMaximumHeight(self.content_height(self.fit_rows))
            if self.min_rows:
                self.setMinimumHeight(self._minimum_height())
            self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._spread()

    def _spread(self) -> None:
        """Share the spare width among the columns, so the table spans its panel."""
        header = self.horizontalHeader()
        n = self.model_.columnCount()
        if n == 0:
            return
        natural = [self.sizeHintForColumn(c) for c in range(n)]
        natural = [max(w, header.sectionSizeHint(c), 64) + 10 for c, w in enumerate(natural)]
        spare = self.viewport().width() - sum(natural)
        extra = max(0, spare) // n
        for c, w in enumerate(natural):
            header.resizeSection(c, w + extra)

    def content_height(self, max_rows: int) -> int:
        rows = min(self.model_.rowCount(), max_rows)
        header = self.horizontalHeader().sizeHint().height()
        extra = (
            self.horizontalScrollBar().sizeHint().height() if rows < self.model_.rowCount() else 0
        )
        row_h = self.verticalHeader().defaultSectionSize()
        return header + max(rows, 1) * row_h + 2 * self.frameWidth() + extra + 2

    def _minimum_height(self) -> int:
        """`min_rows` rows (all, when fewer) with the header and room for a horizontal
        scroll bar, which a wide table shows over its rows."""
        rows = min(self.model_.rowCount(), self.min_rows)
        header = self.horizontalHeader().sizeHint().height()
        bar = self.horizontalScrollBar().sizeHint().height()
        row_h = self.verticalHeader().defaultSectionSize()
        return header + max(rows, 1) * row_h + 2 * self.frameWidth() + bar + 2

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        hint = super().sizeHint()
        if self.fit_rows:
            hint.setHeight(self.content_height(self.fit_rows))
        return hint

    @property
    def frame(self) -> pd.DataFrame:
        return self.model_.frame

    def cell_text(self, row: int, column: int) -> str:
        return str(self.model_.data(self.model_.index(row, column)))
