"""Import a rating file (placeholder until the importer's preview API is wired)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QWidget


class ImportDialog(QDialog):
    def __init__(self, context, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
