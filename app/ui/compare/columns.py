"""Column widths of the comparison table, so a dozen metric columns leave the output readable.

Sizing every column to its contents lets fifteen long metric names ("meaningbert@MODEL",
"bleu[refs=source]") squeeze the output column to a sliver. Numbers need only a few
characters: numeric columns get a narrow width with the name elided in the header (the full
name is the header's tooltip), the output column gets what is left but never less than a
readable minimum, and past that the table scrolls sideways.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QHeaderView, QTableView
from shiboken6 import isValid

OUTPUT_MIN_CHARS = 34  # about six words of output per line
NUMBER_SAMPLE = "100.0"


class ColumnFitter(QObject):
    """Refits the table's columns when its model is reset or its viewport is resized."""

    def __init__(self, table: QTableView, output_column: int = 1) -> None:
        super().__init__(table)
        self.table = table
        self.output_column = output_column
        header = table.horizontalHeader()
        header.setTextElideMode(Qt.TextElideMode.ElideRight)
        header.setStretchLastSection(False)
        self._viewport = table.viewport()
        self._viewport.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize and watched is self._viewport:
            self.fit()
        return False

    def fit(self) -> None:
        if not isValid(self.table):  # a resize while the window is being torn down
            return
        model = self.table.model()
        if model is None:
            return
        header = self.table.horizontalHeader()
        fm = self.table.fontMetrics()
        header_fm = header.fontMetrics()
        pad = 2 * fm.horizontalAdvance("0") + 8
        number = fm.horizontalAdvance(NUMBER_SAMPLE) + pad
        # A header name may take up to 2.6 numbers' width before it is elided.
        cap = int(2.6 * number)
        used = 0
        n = model.columnCount()
        for col in range(n):
            if col == self.output_column:
                continue
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            title = str(model.headerData(col, Qt.Orientation.Horizontal) or "")
            title_w = header_fm.horizontalAdvance(title) + pad + 12  # + the sort arrow
            content_w = self.table.sizeHintForColumn(col)
            numeric = model.index(0, col).data(Qt.ItemDataRole.TextAlignmentRole) is not None
            if numeric:
                width = max(number, min(title_w, cap))
            else:  # the system name: its contents, within limits
                width = max(min(max(content_w, title_w), 3 * number), number)
            header.resizeSection(col, width)
            used += width
        if 0 <= self.output_column < n:
            header.setSectionResizeMode(self.output_column, QHeaderView.ResizeMode.Interactive)
            floor = fm.horizontalAdvance("x" * OUTPUT_MIN_CHARS)
            free = self.table.viewport().width() - used
            header.resizeSection(self.output_column, max(floor, free))
        self.table.resizeRowsToContents()
