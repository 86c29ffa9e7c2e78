"""Small widgets shared by the pages."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFont, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFrame,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTableWidgetItem,
    QWidget,
)


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


class ElidedLabel(QLabel):
    """A one-line label that shortens its text with "…" instead of widening its window.

    A status line or a long metric name must never set the window's minimum width; the
    full text stays available as the tooltip.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setMinimumWidth(40)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._full = text
        self.setToolTip(text if text else "")
        self._elide()

    def text(self) -> str:
        return self._full

    def full_text(self) -> str:
        return self._full

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        hint = super().sizeHint()
        # The style sheet's padding is in the contents margins: room for the whole text.
        margins = self.contentsMargins()
        text = self.fontMetrics().horizontalAdvance(self._full) + 4
        return QSize(text + margins.left() + margins.right(), hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(40, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(
            self._full, Qt.TextElideMode.ElideRight, max(0, self.contentsRect().width() - 2)
        )
        super().setText(shown)


# Where a run's name or a path may break across lines: after these characters, as a
# zero-width space allows (a spec such as "bertscore@org/model[layer=3,idf=sources]" has no
# space, and a word-wrapped label is at least as wide as its longest word).
BREAK_AFTER = "/\\,;=[@_"
ZERO_WIDTH_SPACE = "\u200b"


def breakable(text: str) -> str:
    """`text` with a line-break opportunity after each of `BREAK_AFTER` (shown the same)."""
    return "".join(c + ZERO_WIDTH_SPACE if c in BREAK_AFTER else c for c in text)


class WrappedLabel(QLabel):
    """A word-wrapped status line that may name long runs or paths: it breaks inside them
    instead of widening its window; `text()` gives back the text as it was set."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setWordWrap(True)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._full = text
        super().setText(breakable(text))

    def text(self) -> str:
        return self._full


def choice_combo(name: str, choices: Iterable[tuple[object, str]], tip: str) -> QComboBox:
    """A combo box of (value, words) choices, named for tests and styles, with its tooltip."""
    combo = QComboBox()
    combo.setObjectName(name)
    for value, words in choices:
        combo.addItem(words, value)
    combo.setToolTip(tip)
    return combo


def compact_combo(combo: QComboBox, chars: int = 10) -> QComboBox:
    """A combo box whose width follows `chars` characters, not its longest entry.

    With a dozen metric names (some of them long specs such as "meaningbert@MODEL") a combo
    sized to its contents forces a window wider than a laptop screen; the popup still shows
    the full names, and the tooltip the current one.
    """
    # Full width when the window has room; an explicit minimum width (which layouts use
    # instead of the minimum size hint) lets it shrink to `chars` characters when it has not.
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    combo.setMinimumWidth(combo.fontMetrics().horizontalAdvance("x" * chars) + 36)
    combo.view().setTextElideMode(Qt.TextElideMode.ElideNone)
    purpose = combo.toolTip()

    def tip(text: str) -> None:
        # The box may show only the start of a long name: the tooltip has all of it.
        combo.setToolTip("\n".join(t for t in (purpose, text) if t))

    combo.currentTextChanged.connect(tip)
    tip(combo.currentText())
    return combo


def scrolling(widget: QWidget) -> QScrollArea:
    """`widget` in a frameless scroll area that follows its width: a tall form scrolls inside
    its dialog instead of pushing the dialog's buttons below a small screen."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    area.setWidget(widget)
    return area


def is_enter(event: QEvent) -> bool:
    """Whether `event` is a press of Return or Enter (what a path field's filter catches so
    that Enter previews instead of pressing the dialog's default button)."""
    return (
        event.type() == QEvent.Type.KeyPress
        and isinstance(event, QKeyEvent)
        and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
    )


def grow_to_fit(dialog: QWidget) -> None:
    """Make `dialog` tall enough for what it now shows at its present width (wrapped text
    that appeared after it opened), never narrower: `adjustSize` would shrink it to the
    narrow width that wrapped labels allow."""
    layout = dialog.layout()
    if layout is None:
        return
    width = dialog.width()
    need = (
        layout.totalHeightForWidth(width)
        if layout.hasHeightForWidth()
        else layout.totalSizeHint().height()
    )
    if need > dialog.height():
        dialog.resize(width, need)


def say_in(label: QLabel, text: str, *, error: bool) -> None:
    """Show `text` in `label`, coloured as an error or not (the style sheet's `role`), and
    make the dialog holding it tall enough to show it."""
    label.setText(text)
    label.setProperty("role", "error" if error else "")
    label.style().unpolish(label)
    label.style().polish(label)
    label.show()
    grow_to_fit(label.window())


def table_cell(text: str, right: bool = False) -> QTableWidgetItem:
    """A read-only table cell; numbers and counts align right."""
    item = QTableWidgetItem(text)
    if right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item
