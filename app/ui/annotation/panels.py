"""What opens over or beside the rating screen: the keymap overlay, guidelines, flag dialog."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QHideEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from meaningbench.ops.flag import flag_item, unflag_item
from meaningbench.ui.annotation.keymap import KEYMAP
from meaningbench.ui.annotation.scales import blend

if TYPE_CHECKING:
    from meaningbench.queries.rating_cursor import RatingCursor
    from meaningbench.runtime import Job
    from meaningbench.runtime.changes import StudyChanges


def toggles_keymap(event: QKeyEvent) -> bool:
    """? and F1: the keys that open and close the key list."""
    return event.text() == "?" or event.key() == Qt.Key.Key_F1


def closes_keymap(event: QKeyEvent) -> bool:
    """The keys the open key list leaves to the screen: ?, F1 and Esc, which close it."""
    return toggles_keymap(event) or event.key() == Qt.Key.Key_Escape


class KeymapOverlay(QWidget):
    """A card listing every key, over a dimmed screen; ?, F1 or Esc closes it.

    While shown it holds the keyboard: a key meant for the list must never reach the scale
    or the span editor beneath it (a digit or an arrow would change the rating)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._focus_before: QWidget | None = None
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setObjectName("keymapOverlay")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, False)
        outer = QVBoxLayout(self)
        outer.setAlignment(Qt.AlignmentFlag.AlignCenter)
        card = QFrame(self)
        card.setObjectName("keymapCard")
        card.setAutoFillBackground(True)
        card.setFrameShape(QFrame.Shape.StyledPanel)
        grid = QGridLayout(card)
        grid.setContentsMargins(28, 22, 28, 22)
        grid.setHorizontalSpacing(28)
        grid.setVerticalSpacing(9)
        title = QLabel("Keyboard")
        tf = QFont(title.font())
        tf.setPointSizeF(tf.pointSizeF() * 1.3)
        tf.setWeight(QFont.Weight.DemiBold)
        title.setFont(tf)
        grid.addWidget(title, 0, 0, 1, 2)
        for row, (keys, action) in enumerate(KEYMAP, start=1):
            k = QLabel(keys)
            kf = QFont(k.font())
            kf.setWeight(QFont.Weight.DemiBold)
            k.setFont(kf)
            grid.addWidget(k, row, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            grid.addWidget(QLabel(action), row, 1)
        outer.addWidget(card)
        parent.installEventFilter(self)
        self.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        host = self.parentWidget()
        if host is not None and watched is host and event.type() == QEvent.Type.Resize:
            self.setGeometry(host.rect())
        return False

    def toggle(self) -> None:
        if self.isVisible():
            self.hide()
        else:
            host = self.parentWidget()
            if host is not None:
                self.setGeometry(host.rect())
            self._focus_before = QApplication.focusWidget()
            self.raise_()
            self.show()
            self.setFocus(Qt.FocusReason.OtherFocusReason)

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt's name
        before, self._focus_before = self._focus_before, None
        if before is not None and isValid(before) and before.isVisible():
            before.setFocus(Qt.FocusReason.OtherFocusReason)
        super().hideEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if closes_keymap(event):
            event.ignore()  # to the screen, which closes the list
        else:
            event.accept()

    def event(self, event: QEvent) -> bool:
        # A shortcut (Ctrl+Z's undo among them) is the screen's, not the list's: held too.
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and not closes_keymap(event)
        ):
            event.accept()
            return True
        return super().event(event)

    def paintEvent(self, _event: QPaintEvent) -> None:
        p = QPainter(self)
        shade = QColor(self.palette().color(QPalette.ColorRole.Shadow))
        shade.setAlpha(110)
        p.fillRect(self.rect(), shade)
        p.end()


class GuidelinesPanel(QFrame):
    """The study's guidelines (Markdown), beside the pair; G shows and hides it."""

    def __init__(self, markdown: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("guidelinesPanel")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAutoFillBackground(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(18, 14, 12, 14)
        head = QHBoxLayout()
        title = QLabel("Guidelines")
        tf = QFont(title.font())
        tf.setWeight(QFont.Weight.DemiBold)
        title.setFont(tf)
        self.close_button = QPushButton("Close  G")
        self.close_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.close_button.setFlat(True)
        self.close_button.clicked.connect(self.hide)
        head.addWidget(title)
        head.addStretch(1)
        head.addWidget(self.close_button)
        self.browser = QTextBrowser()
        self.browser.setFrameShape(QFrame.Shape.NoFrame)
        self.browser.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.browser.setOpenExternalLinks(True)
        self.browser.setStyleSheet("QTextBrowser { background: transparent; }")
        self.browser.viewport().setAutoFillBackground(False)
        self.browser.setMarkdown(markdown)
        _tame_headings(self.browser)
        layout.addLayout(head)
        layout.addWidget(self.browser, 1)
        pal = self.palette()
        pal.setColor(
            QPalette.ColorRole.Window,
            blend(pal.color(QPalette.ColorRole.Window), pal.color(QPalette.ColorRole.Base), 0.5),
        )
        self.setPalette(pal)
        self.setMinimumWidth(300)
        self.hide()


def _tame_headings(browser: QTextBrowser) -> None:
    """Markdown headings at Qt's default sizes dwarf a side panel; scale them down."""
    doc = browser.document()
    base = browser.font().pointSizeF()
    sizes = {1: 1.3, 2: 1.18, 3: 1.08}
    block = doc.begin()
    while block.isValid():
        level = block.blockFormat().headingLevel()
        if level:
            cursor = QTextCursor(block)
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            fmt = QTextCharFormat()
            # The importer sizes headings by a relative adjustment; replace it by a size.
            fmt.setProperty(QTextFormat.Property.FontSizeAdjustment, 0)
            fmt.setFontPointSize(base * sizes.get(level, 1.0))
            cursor.mergeCharFormat(fmt)
        block = block.next()


class FlagDialog(QDialog):
    """Flag an item with an optional comment; on a flagged item it can also remove the flag."""

    REMOVE = 2  # result code besides Accepted / Rejected

    def __init__(self, comment: str | None, flagged: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Flag this item")
        self.setObjectName("flagDialog")
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel("Flag a pair that is broken, unreadable or that you could not judge.")
        )
        self.comment = QPlainTextEdit(comment or "")
        self.comment.setPlaceholderText("Comment (optional)")
        self.comment.setMinimumSize(420, 110)
        # A plain text box eats Enter (a new line): the rater's keyboard flow would stop
        # here. Enter confirms the flag; Shift+Enter still starts a new line.
        self.comment.installEventFilter(self)
        layout.addWidget(self.comment)
        keys = QLabel("Enter flags · Shift+Enter new line · Esc cancels")
        keys.setObjectName("hint")
        layout.addWidget(keys)
        buttons = QDialogButtonBox()
        self.flag_button = buttons.addButton("Flag", QDialogButtonBox.ButtonRole.AcceptRole)
        self.remove_button: QPushButton | None = None
        if flagged:
            self.remove_button = buttons.addButton(
                "Remove flag", QDialogButtonBox.ButtonRole.DestructiveRole
            )
            self.remove_button.clicked.connect(lambda: self.done(self.REMOVE))
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.flag_button.setDefault(True)
        layout.addWidget(buttons)
        self.comment.setFocus()

    def comment_text(self) -> str:
        return self.comment.toPlainText().strip()

    def write(self, cursor: RatingCursor[Any], item_id: int, code: int) -> Job[StudyChanges] | None:
        """The write the dialog's answer (`code`, as `finished` gives it) asks for on
        `item_id`: flag with the comment, or remove the flag; None for Esc or Cancel."""
        if code == int(QDialog.DialogCode.Accepted):
            return flag_item(cursor, item_id, self.comment_text())
        if code == self.REMOVE:
            return unflag_item(cursor, item_id)
        return None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if (
            watched is self.comment
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self.accept()
            return True
        return super().eventFilter(watched, event)
