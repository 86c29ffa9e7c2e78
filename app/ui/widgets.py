"""Small widgets shared by the pages."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QLabel, QWidget


class HeadingLabel(QLabel):
    """A label drawn `factor` times the application font, following text-size changes.

    A style sheet cannot say "1.6 times the text size", and an explicitly set font stops
    following the application font, so the size is recomputed when that font changes.
    """

    def __init__(
        self,
        text: str = "",
        factor: float = 1.5,
        parent: QWidget | None = None,
        *,
        bold: bool = True,
    ) -> None:
        super().__init__(text, parent)
        self.factor = factor
        self.bold = bold
        self._apply()

    def _apply(self) -> None:
        font = QFont(QApplication.font())
        font.setPointSizeF(max(1.0, font.pointSizeF() * self.factor))
        font.setBold(self.bold)
        self.setFont(font)

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ApplicationFontChange:
            self._apply()
        return super().event(e)
