"""Help: the keyboard shortcuts of the window and of the annotation screen, and About."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from meaningbench import __version__
from meaningbench.settings import APP_NAME
from meaningbench.ui.menus import shortcut_rows

if TYPE_CHECKING:
    from meaningbench.ui.menus import WindowActions


def annotation_keys() -> list[tuple[str, str]]:
    """(action, keys) of the rating screen, from its own table when it is installed."""
    try:
        from meaningbench.ui.annotation.keymap import KEYMAP
    except ImportError:
        return []
    return [(action, keys) for keys, action in KEYMAP]


def page_rows(actions: WindowActions) -> list[tuple[str, str]]:
    """(page, keys) for every page the window offers now: plug-in pages add their own, and
    rater mode hides the lead's pages with their shortcuts."""
    menu = actions.pages_menu
    if menu is None:
        return []
    return [
        (action.text(), action.shortcut().toString())
        for action in menu.actions()
        if not action.shortcut().isEmpty() and action.isVisible()
    ]


def keymap_rows(actions: WindowActions) -> list[tuple[str, str, str]]:
    """(section, action, keys): the window's shortcuts as they stand now, then the rating
    screen's keys."""
    rows = [("Window", "", "")]
    rows += [("", what, keys) for what, keys in shortcut_rows(actions)]
    rows += [("", f"Go to {what}", keys) for what, keys in page_rows(actions)]
    annotation = annotation_keys()
    if annotation:
        rows += [("Rating screen", "", "")]
        rows += [("", what, keys) for what, keys in annotation]
    return rows


class KeymapDialog(QDialog):
    def __init__(self, actions: WindowActions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("keymapDialog")
        self.setWindowTitle("Keyboard shortcuts")
        self.actions_ = actions
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Action", "Keys"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        self.table.setShowGrid(False)
        self.fill()
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(640, 620)

    def showEvent(self, event: QShowEvent) -> None:
        # The window keeps this dialog: a kit opened (rater mode) or closed since it was
        # made changes which shortcuts there are.
        self.fill()
        super().showEvent(event)

    def fill(self) -> None:
        rows = keymap_rows(self.actions_)
        self.table.clearSpans()
        self.table.clearContents()
        self.table.setRowCount(len(rows))
        for r, (section, what, keys) in enumerate(rows):
            if section:
                item = QTableWidgetItem(section)
                font = item.font()
                font.setBold(True)
                item.setFont(font)
                self.table.setItem(r, 0, item)
                self.table.setSpan(r, 0, 1, 2)
                continue
            self.table.setItem(r, 0, QTableWidgetItem(what))
            self.table.setItem(r, 1, QTableWidgetItem(keys))


def show_about(parent: QWidget | None) -> QMessageBox:
    box = QMessageBox(parent)
    box.setObjectName("aboutDialog")
    box.setWindowTitle(f"About {APP_NAME}")
    box.setIconPixmap(
        parent.windowIcon().pixmap(64, 64) if parent is not None else QLabel().pixmap()
    )
    box.setText(f"<h3>{APP_NAME} {__version__}</h3>")
    box.setInformativeText(
        "A desktop workbench for measuring meaning preservation in text simplification: "
        "import rating data, gather human ratings, run a battery of automatic metrics and "
        "compare them with people.<br><br>MIT licence."
    )
    box.open()
    return box
