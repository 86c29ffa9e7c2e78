"""The app's dialog for training a MeaningBERT on the open study's ratings.

Importing this package costs nothing (the menu imports it at start-up); pyqtgraph and the
training code load when the dialog first opens.
"""

from __future__ import annotations

from typing import Any


def open_training_dialog(window: Any) -> Any:
    """Show the window's training dialog, creating it on first use (one per window).

    Closing the dialog hides it: a running training goes on, and reopening shows it.
    """
    from PySide6.QtWidgets import QDialog

    from meaningbench.ui.training.dialog import TrainingDialog

    dialog = window.findChild(QDialog, "trainingDialog")
    if dialog is None:
        dialog = TrainingDialog(window.context, window)
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
