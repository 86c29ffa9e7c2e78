"""One text of a pair under its caption, in a pane that scrolls it when it is long.

A plain or diff-tinted text is a read-only text browser: it lays a long document out once
per width and paints only what shows. A span editor (a label that takes keys) sits in a
scroll area instead. Either way the panel answers the same questions: its text, how tall it
wants to be, and its pane's scroll bar.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QFrame,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

TEXT_SCALE = 1.55  # the pair's text size relative to the interface font
MIN_TEXT_HEIGHT = 150  # a short pair still gets panels of a calm, steady size
# Beyond this many characters (of text or of its markup) a text is taller than the screen
# at any width the panels get: its height is estimated, not laid out.
LONG_TEXT_CHARS = 6_000
COUNT_WORDS_FROM = 150  # a caption gives the word count of a text this long


def _wrap_to_width(label: QLabel) -> None:
    """Let the label's height follow from the pane's width alone. A word-wrapped label's
    own size hints assume a narrow column, taller than the text at the pane's width: the
    pane would scroll a short text by the difference."""
    policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
    policy.setHeightForWidth(True)
    label.setSizePolicy(policy)


class _Pane(QScrollArea):
    """The scrolling part of a panel. Keys pass through it: a scroll area would take the
    arrows and Page Up / Page Down, which belong to the scales and the span editors."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        event.ignore()


class _TextView(QTextBrowser):
    """A read-only text that scrolls itself and never takes focus: keys stay with the scales.

    A label lays its whole text out again whenever its size is asked for, several times per
    item; a text browser lays a document out once per width and paints only what shows,
    which is what keeps a 2,000-word text quick to show. It answers `text()` and
    `textFormat()` as a label does, so a panel reads the same whichever widget it holds."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pairText")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setOpenLinks(False)
        self.setViewportMargins(0, 0, 12, 0)  # the text keeps clear of the scroll bar
        self.document().setDocumentMargin(0)
        self._text = ""
        self._format = Qt.TextFormat.PlainText

    def setTextFormat(self, fmt: Qt.TextFormat) -> None:
        self._format = fmt

    def textFormat(self) -> Qt.TextFormat:
        return self._format

    def setText(self, text: str) -> None:
        self._text = text
        if self._format == Qt.TextFormat.PlainText:
            self.setPlainText(text)
        else:
            self.setHtml(text)

    def text(self) -> str:
        return self._text

    def keyPressEvent(self, event: QKeyEvent) -> None:
        event.ignore()


class TextPanel(QFrame):
    """A caption ("Original", "Simplified") over a read-only, word-wrapped text that scrolls
    under it when it is longer than the panel."""

    scrolled = Signal()
    scroll_range_changed = Signal()

    def __init__(self, caption: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("textPanel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 16, 8, 20)  # the scroll bar sits in the right margin
        layout.setSpacing(10)
        self._layout = layout
        self.caption = QLabel(caption.upper())
        self.caption.setObjectName("caption")
        self._caption = caption.upper()
        self.text: QLabel | _TextView = _TextView()
        self.pane: QAbstractScrollArea = self.text
        self._fonts: dict[QWidget, QFont] = {}
        self._apply_fonts()
        self._height_key: tuple[int, str, str] | None = None
        self._height = 0
        self._text_margin = 12  # between the text and the scroll bar
        layout.addWidget(self.caption)
        layout.addWidget(self.pane, 1)
        self._watch(self.pane)
        self.setMinimumHeight(MIN_TEXT_HEIGHT)

    def _watch(self, pane: QAbstractScrollArea) -> None:
        # Said by the panel, whichever pane it holds now: a span editor brings its own.
        bar = pane.verticalScrollBar()
        bar.valueChanged.connect(lambda _v: self.scrolled.emit())
        bar.rangeChanged.connect(lambda _lo, _hi: self.scroll_range_changed.emit())

    def _apply_fonts(self) -> None:
        # From the application font, not our own: Ctrl++ / Ctrl+- change the application
        # font, and the sentences being rated must grow and shrink with it.
        base = QFont(QApplication.font())
        cap_font = QFont(base)
        cap_font.setPointSizeF(base.pointSizeF() * 0.82)
        cap_font.setWeight(QFont.Weight.DemiBold)
        cap_font.setLetterSpacing(QFont.SpacingType.PercentageSpacing, 114)
        font = QFont(base)
        font.setPointSizeF(base.pointSizeF() * TEXT_SCALE)
        self._fonts = {self.caption: cap_font, self.text: font}
        for widget, wanted in self._fonts.items():
            widget.setFont(wanted)
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, e: QEvent) -> bool:
        # Moving a panel into a window under the application's style sheet resets the fonts
        # of some of its labels to the inherited one (a span editor's text fell from 1.55
        # times the interface font to the interface font): set them again.
        if e.type() == QEvent.Type.FontChange and isinstance(watched, QWidget):
            wanted = self._fonts.get(watched)
            if wanted is not None and watched.font() != wanted:
                watched.setFont(wanted)
        return super().eventFilter(watched, e)

    def event(self, e: QEvent) -> bool:
        # A top-level widget hears ApplicationFontChange; a child only FontChange, when the
        # application font reaches it through its parents.
        if e.type() in (QEvent.Type.ApplicationFontChange, QEvent.Type.FontChange):
            self._apply_fonts()
        return super().event(e)

    def use_text_widget(self, label: QLabel) -> None:
        """Show `label` (a span editor, say) in place of the text, in a pane that scrolls it."""
        body = QWidget()
        body.setObjectName("paneBody")
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 0, self._text_margin + 4, 0)
        column.addWidget(label)
        column.addStretch(1)
        _wrap_to_width(label)
        pane = _Pane()
        pane.setWidget(body)
        self._layout.replaceWidget(self.pane, pane)
        self.pane.hide()  # out of the layout, but on screen until it is deleted
        self.pane.deleteLater()
        self.pane, self.text = pane, label
        self._watch(pane)
        self._text_margin += 4
        self._apply_fonts()

    def count_words(self, text: str) -> None:
        """Say how long a text is that runs past a screen: the scroll bar alone does not."""
        n = len(text.split())
        self.caption.setText(
            f"{self._caption} · {n:,} WORDS" if n >= COUNT_WORDS_FROM else self._caption
        )

    def set_plain(self, text: str) -> None:
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setText(text)
        self.updateGeometry()

    def set_rich(self, markup: str) -> None:
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setText(markup)
        self.updateGeometry()

    def _text_height(self, width: int) -> int:
        # Asked at every layout of the screen, and a label lays its whole text out again
        # for each answer. A text far taller than any screen only needs to be known to be
        # so: its height is estimated.
        text = self.text.text()
        key = (width, text, self.text.font().toString())
        if self._height_key != key:
            if len(text) > LONG_TEXT_CHARS:
                metrics = self.text.fontMetrics()
                lines = len(text) * metrics.averageCharWidth() // max(1, width) + 1
                self._height = lines * metrics.lineSpacing()
            elif isinstance(self.text, _TextView):
                doc = self.text.document().clone()
                doc.setTextWidth(width)
                self._height = math.ceil(doc.size().height())
            else:
                height = self.text.heightForWidth(width)
                self._height = height if height >= 0 else self.text.sizeHint().height()
            self._height_key = key
        return self._height

    def sizeHint(self) -> QSize:
        # As tall as the text needs: a scroll area's own hint is a fixed guess.
        width = self.width() or 480
        return QSize(width, max(MIN_TEXT_HEIGHT, self.content_height(width)))

    def minimumSizeHint(self) -> QSize:
        return QSize(160, MIN_TEXT_HEIGHT)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.updateGeometry()  # a new width wraps the text to a new height

    def content_height(self, width: int) -> int:
        """The panel's height that shows all of its text at `width`, without scrolling."""
        lay = self._layout
        m, frame = lay.contentsMargins(), self.contentsMargins()
        # Measured as if the scroll bar showed: a text that just fits never gets one.
        bar = self.pane.verticalScrollBar().sizeHint().width()
        used = m.left() + m.right() + frame.left() + frame.right() + self._text_margin + bar
        text = self._text_height(max(100, width - used))
        caption = self.caption.sizeHint().height() + lay.spacing()
        return m.top() + caption + text + m.bottom() + frame.top() + frame.bottom() + 4
