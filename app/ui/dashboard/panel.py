"""A titled dashboard panel: header with its own controls and export menu, then a body.

The body is a stack of the content and a message, so a panel with nothing to show yet
says why ("no ratings yet") instead of drawing an empty plot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ui.icons import themed_icon
from meaningbench.ui.widgets import HeadingLabel

# (menu text, file-dialog filter, suffix)
FORMATS = {
    "png": ("Save as PNG…", "PNG image (*.png)", ".png"),
    "svg": ("Save as SVG…", "SVG drawing (*.svg)", ".svg"),
    "csv": ("Save as CSV…", "CSV table (*.csv)", ".csv"),
    "tex": ("Save as LaTeX…", "LaTeX table (*.tex)", ".tex"),
}


class Panel(QFrame):
    """Header (title, extra widgets, export button) over a content/message stack."""

    def __init__(
        self,
        title: str,
        content: QWidget,
        *,
        formats: Sequence[str] = (),
        name: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("dashboardPanel")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.name = name or title.lower().replace(" ", "-")
        self.content = content
        self.title = HeadingLabel(title, 1.1)
        self.title.setObjectName("sectionHeading")
        # A long title wraps rather than widening the window (laptop screens are 1024 px).
        self.title.setWordWrap(True)
        self.title.setToolTip(title)
        # ...but not into a column of single words when the header's controls crowd it.
        fm = self.title.fontMetrics()
        self.title.setMinimumWidth(min(fm.horizontalAdvance(title), fm.horizontalAdvance("x" * 15)))
        self.header = QHBoxLayout()
        self.header.setContentsMargins(0, 0, 0, 0)
        self.header.setSpacing(6)
        # The title takes the free width (so it wraps only when the panel is narrow).
        self.header.addWidget(self.title, 1)
        self.exporters: dict[str, Callable[[str], object]] = {}
        self.export_button = QToolButton()
        self.export_button.setObjectName("panelExport")
        self.export_button.setIcon(themed_icon("export"))
        self.export_button.setToolTip(f"Export “{title}”")
        self.export_button.setAutoRaise(True)
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self)
        self.export_button.setMenu(self.menu)
        self._formats = list(formats)
        self.export_button.setVisible(bool(self._formats))
        self.message = QLabel()
        self.message.setObjectName("mutedLabel")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(content)
        self.stack.addWidget(self.message)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.setSpacing(6)
        layout.addLayout(self.header)
        layout.addWidget(self.stack, 1)
        self.header.addWidget(self.export_button)

    def add_header_widget(self, widget: QWidget) -> None:
        """Put a control in the header, before the export button."""
        self.header.insertWidget(self.header.count() - 1, widget)

    def set_exporter(self, fmt: str, write: Callable[[str], object]) -> None:
        """Register how this panel writes `fmt`; the menu lists registered formats in order."""
        self.exporters[fmt] = write
        self._rebuild_menu()

    def _rebuild_menu(self) -> None:
        self.menu.clear()
        for fmt in self._formats:
            if fmt in self.exporters:
                action = QAction(FORMATS[fmt][0], self.menu)
                action.triggered.connect(lambda _c=False, f=fmt: self.export_dialog(f))
                self.menu.addAction(action)

    def export_dialog(self, fmt: str) -> str | None:
        """Ask where to save, then write; returns the path written (None if cancelled)."""
        text, filt, suffix = FORMATS[fmt]
        path, _ = QFileDialog.getSaveFileName(self, text.rstrip("…"), self.name + suffix, filt)
        if not path:
            return None
        if not path.lower().endswith(suffix):
            path += suffix
        self.export(fmt, path)
        return path

    def export(self, fmt: str, path: str) -> None:
        self.exporters[fmt](path)

    def show_context_menu(self, widget: QWidget, pos: QPoint) -> None:
        if not self.menu.isEmpty():
            self.menu.popup(widget.mapToGlobal(pos))

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def show_content(self) -> None:
        self.stack.setCurrentWidget(self.content)

    @property
    def showing_message(self) -> bool:
        return self.stack.currentWidget() is self.message
