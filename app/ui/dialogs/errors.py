"""Error dialogs: a user's mistake gets its message; a bug gets the message and the traceback.

Dialogs are opened window-modal with `open()` rather than `exec()`, so the event loop (and
any running job) keeps going while the message is on screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:
    from meaningbench.ui.workers import JobFailure

ERROR_DIALOG_NAME = "mbErrorDialog"


def show_error(
    parent: QWidget | None, title: str, message: str, details: str | None = None
) -> QMessageBox:
    box = QMessageBox(parent)
    box.setObjectName(ERROR_DIALOG_NAME)
    box.setIcon(QMessageBox.Icon.Critical)
    box.setWindowTitle(title)
    box.setText(message)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if details:
        box.setDetailedText(details)
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def show_failure(parent: QWidget | None, failure: JobFailure) -> QMessageBox:
    if failure.is_user_error:
        return show_error(parent, failure.title, failure.message)
    return show_error(
        parent,
        failure.title,
        f"{failure.title} failed: {failure.message}\n\nWork finished before the error was kept.",
        failure.trace,
    )


def user_fault(exc: BaseException, path: object = None) -> Exception | None:
    """A full disk, a read-only or failing medium, as the message the user needs; else None."""
    from meaningbench.queries.files import describe_fault

    return describe_fault(exc, path if isinstance(path, str | Path) else None)


def show_exception(parent: QWidget | None, title: str, exc: BaseException) -> QMessageBox:
    """For errors raised on the GUI thread (opening a study, saving settings)."""
    import traceback

    from meaningbench.queries.files import is_user_error

    if is_user_error(exc):
        return show_error(parent, title, str(exc))
    fault = user_fault(exc)
    if fault is not None:
        return show_error(parent, title, str(fault))
    trace = "".join(traceback.format_exception(exc))
    return show_error(parent, title, f"{title}: {exc}", trace)
