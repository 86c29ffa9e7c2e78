"""Help ▸ User guide: the Markdown guides of resources/docs, rendered, with their links."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QUrl
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QListView,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from meaningbench.guides import Guide, guides
from meaningbench.ui.window_state import open_at


class GuidesDialog(QDialog):
    """A list of guides beside a browser; links between guides and to screenshots work."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("guidesDialog")
        self.setWindowTitle("User guide")
        self.guides: list[Guide] = guides()
        self.list = QListWidget()
        # Titles run to 70 characters: they wrap onto more lines rather than end in "…".
        self.list.setWordWrap(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setSpacing(2)
        for guide in self.guides:
            item = QListWidgetItem(guide.title.replace("`", ""))  # Markdown code marks
            item.setToolTip(guide.title)
            self.list.addItem(item)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setOpenLinks(True)
        self.browser.sourceChanged.connect(self._follow)
        splitter = QSplitter()
        splitter.addWidget(self.list)
        splitter.addWidget(self.browser)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 740])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        row.addWidget(splitter)
        layout.addLayout(row)
        layout.addWidget(buttons)
        self.list.currentRowChanged.connect(self.show_guide)
        open_at(self, QSize(1000, 700))
        if self.guides:
            self.list.setCurrentRow(0)

    def show_guide(self, row: int) -> None:
        if 0 <= row < len(self.guides):
            path = self.guides[row].path
            if self.browser.source().toLocalFile() != str(path):
                self.browser.setSource(QUrl.fromLocalFile(str(path)))

    def _follow(self, url: QUrl) -> None:
        """Keep the list in step when a link leads to another guide."""
        path = url.toLocalFile()
        for row, guide in enumerate(self.guides):
            if str(guide.path) == path and self.list.currentRow() != row:
                self.list.blockSignals(True)
                self.list.setCurrentRow(row)
                self.list.blockSignals(False)
