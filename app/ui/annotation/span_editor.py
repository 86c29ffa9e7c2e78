"""Marking error spans with the keyboard: a word cursor over a text, minor or major.

← / → move the cursor a word, Shift+← / Shift+→ stretch the selection, 1 marks the
selection a minor error and 2 a major one, Delete (or Backspace) removes the span under
the cursor. Every other key goes on to the screen (Enter submits, Tab moves on to the
score). The spans are character offsets into the text, over whole words.

The text with its span tints is set once per change of the spans; the word cursor and the
selection are painted over it. On a 2,000-word text, setting the text costs a layout of the
whole of it, far too slow for every arrow key. Where the words stand on screen comes from a
layout of the same markup, font and width, which also lets the pane around the editor
scroll to keep the cursor's word in sight.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import QLabel, QScrollArea, QSizePolicy, QWidget

from meaningbench.queries.annotation import Span, make_span, words
from meaningbench.ui.annotation.scales import NAV_MODIFIERS, blend

SEVERITY_KEYS = {Qt.Key.Key_1: "minor", Qt.Key.Key_2: "major"}
MINOR_TINT = QColor("#f2b84b")
MAJOR_TINT = QColor("#e0564f")


class SpanEditor(QLabel):
    """The text of one side (output or source) with its error spans, keyboard-marked."""

    spansChanged = Signal()
    focused = Signal()

    def __init__(self, side: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side = side
        self.setObjectName("pairText")
        self.setAccessibleName(f"error spans in the {side}")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self._text = ""
        self._words: list[tuple[int, int]] = []
        self._spans: list[Span] = []
        self._cursor = 0  # word index
        self._anchor = 0  # word index where the selection started
        self._markup = ""
        self._layout_doc: QTextDocument | None = None
        self._layout_key: tuple[str, int, str] | None = None

    # -- state ---------------------------------------------------------------------------

    def load(self, text: str, spans: tuple[Span, ...] | list[Span] = ()) -> None:
        self._text = text
        self._words = words(text)
        self._spans = sorted(s for s in spans if s.side == self.side)
        self._cursor = self._anchor = 0
        self._render()

    def spans(self) -> list[Span]:
        return list(self._spans)

    def plain_text(self) -> str:
        return self._text

    def selection(self) -> tuple[int, int] | None:
        """The selected character range (whole words), or None for a text without words."""
        if not self._words:
            return None
        lo, hi = sorted((self._anchor, self._cursor))
        return self._words[lo][0], self._words[hi][1]

    def mark(self, severity: str) -> None:
        sel = self.selection()
        if sel is None:
            return
        start, end = sel
        # A new span replaces the spans it overlaps: re-marking a word changes its severity.
        self._spans = [s for s in self._spans if s.end <= start or s.start >= end]
        self._spans.append(make_span(self.side, self._text, start, end, severity))
        self._spans.sort()
        self._anchor = self._cursor
        self._render()
        self.spansChanged.emit()

    def remove_at_cursor(self) -> bool:
        if not self._words:
            return False
        a, b = self._words[self._cursor]
        kept = [s for s in self._spans if s.end <= a or s.start >= b]
        if len(kept) == len(self._spans):
            return False
        self._spans = kept
        self._render()
        self.spansChanged.emit()
        return True

    # The word cursor's move; nothing calls QWidget.move on the editor, a child of its pane.
    def move(self, delta: int, *, extend: bool = False) -> None:  # type: ignore[override]
        if not self._words:
            return
        self._cursor = min(len(self._words) - 1, max(0, self._cursor + delta))
        if not extend:
            self._anchor = self._cursor
        self.update()  # the selection is painted over the text: no new markup
        self.reveal_cursor()

    def _layout(self) -> QTextDocument:
        """The text laid out as the label lays it out: same markup, font and width."""
        width = self.contentsRect().width()
        key = (self._markup, width, self.font().toString())
        if self._layout_key != key or self._layout_doc is None:
            doc = QTextDocument()
            doc.setDefaultFont(self.font())
            doc.setDocumentMargin(0)  # a label lays its text out from its very edge
            doc.setHtml(self._markup)
            doc.setTextWidth(width)
            doc.size()  # lays the text out: its lines exist only after that
            self._layout_doc, self._layout_key = doc, key
        return self._layout_doc

    def _doc_pos(self, index: int) -> int:
        # Python counts code points, the layout UTF-16 units (an emoji is two).
        return len(self._text[:index].encode("utf-16-le")) // 2

    def _line_rects(self, start: int, end: int) -> list[QRectF]:
        """One rectangle per line over the characters start..end, in this widget."""
        doc = self._layout()
        origin = self.contentsRect().topLeft()
        lo, hi = self._doc_pos(start), self._doc_pos(end)
        rects = []
        block = doc.findBlock(lo)
        while block.isValid() and block.position() <= hi:
            top = doc.documentLayout().blockBoundingRect(block).top()
            layout = block.layout()
            for k in range(layout.lineCount()):
                line = layout.lineAt(k)
                a = max(lo, block.position() + line.textStart())
                b = min(hi, block.position() + line.textStart() + line.textLength())
                if a >= b:
                    continue
                # PySide6 types cursorToX's (x, position) pair as object.
                x1 = line.cursorToX(a - block.position())[0]  # type: ignore[index]
                x2 = line.cursorToX(b - block.position())[0]  # type: ignore[index]
                rects.append(
                    QRectF(origin.x() + x1, origin.y() + top + line.y(), x2 - x1, line.height())
                )
            block = block.next()
        return rects

    def cursor_line(self) -> tuple[int, int]:
        """(top, height) in pixels of the line that holds the cursor's word, in this widget."""
        if not self._words:
            return 0, 0
        start, end = self._words[self._cursor]
        rects = self._line_rects(start, end)
        if not rects:
            return self.contentsRect().top(), self.fontMetrics().height()
        return round(rects[0].top()), round(rects[0].height())

    def reveal_cursor(self) -> None:
        """Scroll the pane the editor sits in so that the cursor's line shows."""
        area = self.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        inner = area.widget() if area is not None else None
        if area is None or inner is None:
            return
        top, height = self.cursor_line()
        at = self.mapTo(inner, self.rect().topLeft())
        area.ensureVisible(at.x(), at.y() + top + height // 2, 0, height * 2)

    # -- keys ------------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, mods = event.key(), event.modifiers()
        if mods & NAV_MODIFIERS:
            event.ignore()  # Alt/Ctrl + arrows and Ctrl+Z belong to the screen
            return
        extend = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        if key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            self.move(-1 if key == Qt.Key.Key_Left else 1, extend=extend)
        elif key in (Qt.Key.Key_Home, Qt.Key.Key_End):
            self.move(
                -len(self._words) if key == Qt.Key.Key_Home else len(self._words), extend=extend
            )
        elif key in SEVERITY_KEYS:
            self.mark(SEVERITY_KEYS[Qt.Key(key)])
        elif key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.remove_at_cursor()
        elif Qt.Key.Key_0 <= key <= Qt.Key.Key_9:
            pass  # other digits mean nothing here; they must not reach the score
        else:
            event.ignore()
            return
        event.accept()

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.update()
        self.focused.emit()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.update()

    # -- drawing ---------------------------------------------------------------------------

    def _render(self) -> None:
        """Set the text with its span tints (the selection is painted, not set)."""
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        tints = {"minor": blend(base, MINOR_TINT, 0.55), "major": blend(base, MAJOR_TINT, 0.5)}
        cuts = {0, len(self._text)}
        for s in self._spans:
            cuts.update((s.start, s.end))
        points = sorted(cuts)
        out = []
        for a, b in zip(points, points[1:], strict=False):
            piece = html.escape(self._text[a:b])
            span = next((s for s in self._spans if s.start <= a and b <= s.end), None)
            if span is None:
                out.append(piece)
                continue
            style = f"background-color:{tints[span.severity].name()}"
            if span.severity == "major":
                style += "; font-weight:600"
            out.append(f'<span style="{style}">{piece}</span>')
        self._markup = '<div style="white-space:pre-wrap;">' + "".join(out) + "</div>"
        # The pair view sets its texts as plain text first: the marks need rich text again.
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setText(self._markup)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        sel = self.selection()
        if sel is None:
            return
        pal = self.palette()
        focused = self.hasFocus()
        # Without the keys the cursor still shows where marking starts, in a muted line:
        # a rater must see it before the first arrow key, not find it by pressing one.
        accent = QColor(
            pal.color(QPalette.ColorRole.Highlight)
            if focused
            else blend(pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text), 0.45)
        )
        painter = QPainter(self)
        for rect in self._line_rects(*sel):
            if not rect.intersects(QRectF(event.rect())):
                continue
            if focused:
                accent.setAlpha(40)
                painter.fillRect(rect, accent)
                accent.setAlpha(255)
            painter.fillRect(QRectF(rect.left(), rect.bottom() - 2, rect.width(), 2), accent)
        painter.end()
