"""The dialog's side panels: the model card summary, and notices (checkpoint, error).

Colours come from the palette (a tint of the highlight or of red over the window colour),
so the panels read well in the light and the dark theme alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QColor, QDesktopServices, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.queries.training import (
    CARD_MD,
    FigureRow,
    heldout_caption,
    heldout_rows,
    sanity_rows,
)
from meaningbench.ui.widgets import HeadingLabel

KINDS = {"info": None, "error": QColor("#d0343f"), "success": QColor("#2e9b57")}


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(
        round(a.red() * (1 - t) + b.red() * t),
        round(a.green() * (1 - t) + b.green() * t),
        round(a.blue() * (1 - t) + b.blue() * t),
    )


class Notice(QFrame):
    """A tinted box with a bold title and a few lines of text (selectable, wrapped)."""

    def __init__(self, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.kind = "info"
        self.heading = QLabel("")
        font = self.heading.font()
        font.setBold(True)
        self.heading.setFont(font)
        self.body = QLabel("")
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details = ""
        self.details_button = QPushButton("Details…")
        self.details_button.setToolTip("The error's traceback, to report it")
        self.details_button.clicked.connect(self._show_details)
        self.details_button.setVisible(False)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.heading, 1)
        head.addWidget(self.details_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(3)
        layout.addLayout(head)
        layout.addWidget(self.body)
        self.setVisible(False)

    def show_text(self, kind: str, heading: str, lines: list[str], details: str = "") -> None:
        self.kind = kind
        self.heading.setText(heading)
        self.body.setText("\n".join(lines))
        self.details = details
        self.details_button.setVisible(bool(details))
        self._style()
        self.setVisible(True)

    def _show_details(self) -> None:
        from meaningbench.ui.dialogs.errors import show_error

        show_error(self.window(), self.heading.text(), self.body.text(), self.details)

    def text(self) -> str:
        return f"{self.heading.text()}\n{self.body.text()}"

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        # A theme switch: retint. Setting the style sheet sends a palette change too, which
        # `_style` ignores because the sheet is then already the one it would set.
        if event.type() == QEvent.Type.PaletteChange:
            self._style()
        super().changeEvent(event)

    def _style(self) -> None:
        pal = QApplication.palette()
        window = pal.color(QPalette.ColorRole.Window)
        accent = KINDS.get(self.kind) or pal.color(QPalette.ColorRole.Highlight)
        background = _mix(window, accent, 0.12)
        border = _mix(window, accent, 0.55)
        sheet = (
            f"QFrame#{self.objectName()} {{ background: {background.name()}; "
            f"border: 1px solid {border.name()}; border-radius: 6px; }}"
        )
        if sheet != self.styleSheet():
            self.setStyleSheet(sheet)


def _bold(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def _fill_grid(grid: QGridLayout, title: str, rows: list[FigureRow]) -> None:
    """A titled block of (label, value, detail) rows, values right-aligned for comparison."""
    while grid.count():
        item = grid.takeAt(0)
        widget = item.widget() if item is not None else None
        if widget is not None:
            widget.deleteLater()
    if not rows:
        return
    grid.addWidget(_bold(title), 0, 0, 1, 3)
    for r, row in enumerate(rows, start=1):
        value = _bold(row.value)
        value.setObjectName("figureValue")
        value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        detail = QLabel(row.detail)
        detail.setObjectName("mutedLabel")
        grid.addWidget(QLabel(row.label), r, 0)
        grid.addWidget(value, r, 1)
        grid.addWidget(detail, r, 2)
    grid.setColumnStretch(2, 1)
    grid.setRowStretch(len(rows) + 1, 1)  # blocks of unequal length stay top-aligned


class CardPanel(QFrame):
    """The finished model: test figures, sanity checks, where it is and how to use it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("cardPanel")
        self.card: dict[str, Any] = {}
        self.out_dir: Path | None = None
        self.heading = HeadingLabel("Model card", 1.15)
        self.caption = QLabel("")
        self.caption.setObjectName("mutedLabel")
        self.caption.setWordWrap(True)
        self.test_grid = QGridLayout()
        self.sanity_grid = QGridLayout()
        for grid in (self.test_grid, self.sanity_grid):
            grid.setHorizontalSpacing(12)
            grid.setVerticalSpacing(2)
        self.registered = QLabel("")
        self.registered.setObjectName("registeredLabel")
        self.registered.setWordWrap(True)
        self.registered.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_folder = QPushButton("Open folder")
        self.open_folder.clicked.connect(lambda: self._open(None))
        self.open_card = QPushButton("Open model card")
        self.open_card.clicked.connect(lambda: self._open(CARD_MD))
        head = QHBoxLayout()
        head.addWidget(self.heading)
        head.addStretch(1)
        head.addWidget(self.open_folder)
        head.addWidget(self.open_card)
        figures = QHBoxLayout()
        figures.setSpacing(28)
        figures.addLayout(self.test_grid, 1)
        figures.addLayout(self.sanity_grid, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(head)
        layout.addWidget(self.caption)
        layout.addLayout(figures)
        layout.addWidget(self.registered)
        self.rows: list[FigureRow] = []
        self.setVisible(False)

    def show_card(self, card: dict[str, Any], out_dir: Path, registered_as: str | None) -> None:
        self.card, self.out_dir = card, out_dir
        self.caption.setText(heldout_caption(card))
        test, sanity = heldout_rows(card), sanity_rows(card)
        self.rows = test + sanity
        _fill_grid(self.test_grid, "Agreement with the human ratings", test)
        _fill_grid(self.sanity_grid, "Sanity checks", sanity)
        if registered_as:
            metrics = card.get("metrics") or [card.get("metric") or "meaningbert"]
            names = " and ".join(f"<b>{m}@{registered_as}</b>" for m in metrics)
            self.registered.setText(
                f"Registered in this study as {names}: it is in "
                "Study ▸ Run metrics… with the other metrics, and once it has scored the "
                "study the dashboard shows it beside them."
            )
        else:
            self.registered.setText("Not registered in the study.")
        self.setVisible(True)

    def _open(self, name: str | None) -> None:
        if self.out_dir is None:
            return
        path = self.out_dir / name if name else self.out_dir
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
