"""The page shown when no study is open: the demo study, open, new, import, the user guide
and the recent studies."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ui.icons import app_icon, themed_icon
from meaningbench.ui.widgets import HeadingLabel

PATH_ROLE = Qt.ItemDataRole.UserRole + 1


class WelcomePage(QWidget):
    open_requested = Signal()
    new_requested = Signal()
    demo_requested = Signal()
    import_requested = Signal()
    guide_requested = Signal()
    recent_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomePage")
        logo = QLabel()
        logo.setPixmap(app_icon().pixmap(QSize(72, 72)))
        title = HeadingLabel("MeaningBench", 2.0)
        title.setObjectName("welcomeTitle")
        subtitle = QLabel(
            "Measure meaning preservation in text simplification: import rating data, "
            "gather human ratings, run the metric battery and compare it with people."
        )
        subtitle.setObjectName("mutedLabel")
        subtitle.setWordWrap(True)

        self.demo_button = QPushButton(themed_icon("demo"), "Open the demo study")
        self.demo_button.setObjectName("welcomeDemo")
        self.open_button = QPushButton(themed_icon("open"), "Open study…")
        self.new_button = QPushButton(themed_icon("new"), "New study…")
        self.import_button = QPushButton(themed_icon("import"), "Import ratings…")
        self.import_button.setToolTip(
            "Choose a CSV, TSV or JSON-lines file of items and ratings; it is imported into "
            "a new study"
        )
        self.demo_button.clicked.connect(self.demo_requested)
        self.open_button.clicked.connect(self.open_requested)
        self.new_button.clicked.connect(self.new_requested)
        self.import_button.clicked.connect(self.import_requested)
        buttons = QHBoxLayout()
        for b in (self.demo_button, self.open_button, self.new_button, self.import_button):
            b.setMinimumHeight(34)
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.guide_link = QLabel(
            '<a href="guide">Read the user guide</a> — how to rate, import, score and compare '
            "(Help ▸ User guide, F1)"
        )
        self.guide_link.setObjectName("welcomeGuideLink")
        self.guide_link.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.guide_link.linkActivated.connect(lambda _href: self.guide_requested.emit())

        recent_title = HeadingLabel("Recent studies", 1.15)
        recent_title.setObjectName("sectionHeading")
        self.recent_list = QListWidget()
        self.recent_list.setObjectName("recentList")
        self.recent_list.itemActivated.connect(self._on_activated)
        self.no_recent = QLabel("No recent studies yet.")
        self.no_recent.setObjectName("mutedLabel")

        column = QVBoxLayout()
        column.setSpacing(12)
        header = QHBoxLayout()
        header.setSpacing(16)
        header.addWidget(logo)
        texts = QVBoxLayout()
        texts.addWidget(title)
        texts.addWidget(subtitle)
        header.addLayout(texts, 1)
        column.addLayout(header)
        column.addSpacing(8)
        column.addLayout(buttons)
        column.addWidget(self.guide_link)
        column.addSpacing(16)
        column.addWidget(recent_title)
        column.addWidget(self.recent_list, 1)
        column.addWidget(self.no_recent)
        # Takes the spare height while the list is hidden, so the page keeps together.
        column.addStretch(0)

        frame = QWidget()
        frame.setMaximumWidth(760)
        frame.setLayout(column)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(40, 40, 40, 30)
        outer.addStretch(1)
        outer.addWidget(frame, 4)
        outer.addStretch(1)

    def set_recent(self, paths: list[str]) -> None:
        self.recent_list.clear()
        for p in paths:
            path = Path(p)
            exists = path.exists()
            label = f"{path.stem}    {path.parent}"
            item = QListWidgetItem(label if exists else f"{label}    (missing)")
            item.setData(PATH_ROLE, str(path))
            item.setToolTip(str(path))
            if not exists:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.recent_list.addItem(item)
        self.no_recent.setVisible(not paths)
        self.recent_list.setVisible(bool(paths))

    def set_demo_available(self, available: bool, reason: str = "") -> None:
        self.demo_button.setEnabled(available)
        self.demo_button.setToolTip("" if available else reason)

    def _on_activated(self, item: QListWidgetItem) -> None:
        path = item.data(PATH_ROLE)
        if path:
            self.recent_requested.emit(str(path))
