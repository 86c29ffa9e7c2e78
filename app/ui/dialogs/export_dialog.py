"""Export (placeholder)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QWidget


class ExportDialog(QDialog):
    def __init__(self, context, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
