"""Marking error spans with the keyboard: a word cursor over a text, minor or major.

← / → move the cursor a word, Shift+← / Shift+→ stretch the selection, 1 marks the
selection a minor error and 2 a major one, Delete (or Backspace) removes the span under
the cursor. On a span, 1 / 2 without a stretched selection change its severity and keep
its whole extent; a selection stretched with Shift replaces the spans it overlaps. Every other key goes on to the screen (Enter submits, Tab moves on to the
score). The spans are character offsets into the text, over whole words.

Pre-filled spans (a judge's proposals) are drawn paler, in a dashed frame, until the rater
decides: A keeps the proposal under the cursor, 1 / 2 on it sets its severity (a new
selection across it, its extent), Delete deletes it, N goes to the next undecided one. A proposal left
undecided at submission counts as kept. Each proposal remembers the span it became, so the
rating records its fate (`ProposalFate`).

The text with its span tints is set once per change of the spans; the word cursor and the
selection are painted over it. On a 2,000-word text, setting the text costs a layout of the
whole of it, far too slow for every arrow key. Where the words stand on screen comes from a
layout of the same markup, font and width, which also lets the pane around the editor
scroll to keep the cursor's word in sight.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFocusEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QTextDocument,
)
from PySide6.QtWidgets import QLabel, QScrollArea, QSizePolicy, QWidget

from meaningbench.queries.annotation import ProposalFate, ProposedSpan, Span, make_span, words
from meaningbench.ui.annotation.scales import CHORD_MODIFIERS, blend

SEVERITY_KEYS = {Qt.Key.Key_1: "minor", Qt.Key.Key_2: "major"}
MINOR_TINT = QColor("#f2b84b")
MAJOR_TINT = QColor("#e0564f")
# How strongly a span's tint shows: a rater's (or a decided proposal's), an undecided one.
SOLID = {"minor": 0.55, "major": 0.5}
PROPOSED = {"minor": 0.28, "major": 0.25}


@dataclass(frozen=True)
class Mark:
    """A span on the text; `proposal`: the judge's span it comes from (None: the rater's);
    `decided`: the rater kept or edited it (an undecided proposal is drawn as proposed)."""

    span: Span
    proposal: ProposedSpan | None = None
    decided: bool = True

    @property
    def pending(self) -> bool:
        return self.proposal is not None and not self.decided


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
        self._marks: list[Mark] = []
        self._deleted: list[ProposedSpan] = []  # proposals the rater deleted
        self._cursor = 0  # word index
        self._anchor = 0  # word index where the selection started
        # Whether the selection was stretched with Shift: only then do 1 / 2 give a span a
        # new extent; on the cursor's word alone they change the severity of the span there.
        self._stretched = False
        self._markup = ""
        self._layout_doc: QTextDocument | None = None
        self._layout_key: tuple[str, int, str] | None = None

    # -- state ---------------------------------------------------------------------------

    def load(
        self,
        text: str,
        spans: Sequence[Span] = (),
        proposals: Sequence[ProposedSpan] = (),
        fates: Sequence[ProposalFate] = (),
    ) -> None:
        """Show the text with its spans; an unrated item's `proposals` as undecided marks,
        a rated item's `fates` (what became of its proposals) on the spans they became."""
        self._text = text
        self._words = words(text)
        origin = {f.span: f.proposal for f in fates if f.span is not None}
        self._marks = [Mark(s, origin.get(s)) for s in spans if s.side == self.side]
        self._marks += [
            Mark(p.span, p, decided=False) for p in proposals if p.span.side == self.side
        ]
        self._marks.sort(key=lambda m: m.span)
        self._deleted = [
            f.proposal for f in fates if f.span is None and f.proposal.span.side == self.side
        ]
        self._cursor = self._anchor = 0
        self._stretched = False
        self._render()
        first = next((m.span.start for m in self._marks if m.pending), None)
        if first is not None:  # the rater starts on the first proposal to decide
            self._cursor = self._anchor = next(
                i for i, (_a, b) in enumerate(self._words) if b > first
            )

    def spans(self) -> list[Span]:
        return [m.span for m in self._marks]

    def marks(self) -> list[Mark]:
        return list(self._marks)

    def fates(self) -> list[ProposalFate]:
        """Each proposal of this text with the span it became (None: deleted)."""
        made = [ProposalFate(m.proposal, m.span) for m in self._marks if m.proposal is not None]
        gone = [ProposalFate(p, None) for p in self._deleted]
        return sorted(made + gone, key=lambda f: f.proposal.span)

    def pending(self) -> int:
        """How many proposals wait for the rater's decision."""
        return sum(m.pending for m in self._marks)

    def plain_text(self) -> str:
        return self._text

    def selection(self) -> tuple[int, int] | None:
        """The selected character range (whole words), or None for a text without words."""
        if not self._words:
            return None
        lo, hi = sorted((self._anchor, self._cursor))
        return self._words[lo][0], self._words[hi][1]

    def mark(self, severity: str) -> None:
        """Mark the selection with `severity`; on a span with no stretched selection, give
        that span the severity and keep its extent (a proposal keeps its words)."""
        sel = self.selection()
        if sel is None:
            return
        here = self._at_cursor()
        if not self._stretched and len(here) == 1:
            self._set_severity(here[0], severity)
            return
        start, end = sel
        # A new span replaces the spans it overlaps: re-marking a word changes its severity.
        # Over a proposal it is that proposal edited; other proposals it covers are deleted.
        covered = [m for m in self._marks if m.span.end > start and m.span.start < end]
        proposals = [m.proposal for m in covered if m.proposal is not None]
        self._deleted += proposals[1:]
        self._marks = [m for m in self._marks if m not in covered]
        span = make_span(self.side, self._text, start, end, severity)
        self._marks.append(Mark(span, proposals[0] if proposals else None))
        self._marks.sort(key=lambda m: m.span)
        self._anchor = self._cursor
        self._stretched = False
        self._render()
        self.spansChanged.emit()

    def _set_severity(self, old: Mark, severity: str) -> None:
        span = make_span(self.side, self._text, old.span.start, old.span.end, severity)
        self._marks = [Mark(span, m.proposal) if m is old else m for m in self._marks]
        self._render()
        self.spansChanged.emit()

    def _at_cursor(self) -> list[Mark]:
        if not self._words:
            return []
        a, b = self._words[self._cursor]
        return [m for m in self._marks if m.span.end > a and m.span.start < b]

    def remove_at_cursor(self) -> bool:
        gone = self._at_cursor()
        if not gone:
            return False
        self._deleted += [m.proposal for m in gone if m.proposal is not None]
        self._marks = [m for m in self._marks if m not in gone]
        self._render()
        self.spansChanged.emit()
        return True

    def accept_at_cursor(self) -> bool:
        """Keep the undecided proposal under the cursor as it is; False if there is none."""
        here = [m for m in self._at_cursor() if m.pending]
        if not here:
            return False
        self._marks = [Mark(m.span, m.proposal) if m in here else m for m in self._marks]
        self._render()
        self.spansChanged.emit()
        self.next_proposal()
        return True

    def next_proposal(self) -> bool:
        """Put the cursor over the next undecided proposal (from the start past the last)."""
        starts = [m.span.start for m in self._marks if m.pending]
        if not starts or not self._words:
            return False
        here = self._words[self._cursor][0]
        after = [s for s in starts if s > here] or starts
        target = next(i for i, (_a, b) in enumerate(self._words) if b > after[0])
        self._cursor = self._anchor = target
        self._stretched = False
        self.update()
        self.reveal_cursor()
        return True

    # The word cursor's move; nothing calls QWidget.move on the editor, a child of its pane.
    def move(self, delta: int, *, extend: bool = False) -> None:  # type: ignore[override]
        if not self._words:
            return
        self._cursor = min(len(self._words) - 1, max(0, self._cursor + delta))
        if not extend:
            self._anchor = self._cursor
        # Stretched means more than one word: Shift+→ on the last word (the cursor held at
        # the end), or there and back, leaves one word, and 1/2 there re-grade the span.
        self._stretched = extend and self._anchor != self._cursor
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
        if mods & CHORD_MODIFIERS:
            # Alt/Ctrl + arrows and Ctrl+Z belong to the screen; Ctrl+1 marks nothing.
            event.ignore()
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
        elif key == Qt.Key.Key_A and self.pending():
            self.accept_at_cursor()
        elif key == Qt.Key.Key_N and self.pending():
            self.next_proposal()
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
        tint = {"minor": MINOR_TINT, "major": MAJOR_TINT}
        cuts = {0, len(self._text)}
        for m in self._marks:
            cuts.update((m.span.start, m.span.end))
        points = sorted(cuts)
        out = []
        for a, b in zip(points, points[1:], strict=False):
            piece = html.escape(self._text[a:b])
            mark = next((m for m in self._marks if m.span.start <= a and b <= m.span.end), None)
            if mark is None:
                out.append(piece)
                continue
            severity = mark.span.severity
            share = (PROPOSED if mark.pending else SOLID)[severity]
            style = f"background-color:{blend(base, tint[severity], share).name()}"
            if severity == "major":
                style += "; font-weight:600"
            out.append(f'<span style="{style}">{piece}</span>')
        self._markup = '<div style="white-space:pre-wrap;">' + "".join(out) + "</div>"
        # The pair view sets its texts as plain text first: the marks need rich text again.
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setText(self._markup)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        self._paint_proposals(event)
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

    def _paint_proposals(self, event: QPaintEvent) -> None:
        """A dashed frame, in the severity's colour, around each undecided proposal."""
        pending = [m for m in self._marks if m.pending]
        if not pending:
            return
        painter = QPainter(self)
        for m in pending:
            pen = QPen(MAJOR_TINT if m.span.severity == "major" else MINOR_TINT.darker(130))
            pen.setStyle(Qt.PenStyle.DashLine)
            pen.setWidthF(1.5)
            painter.setPen(pen)
            for rect in self._line_rects(m.span.start, m.span.end):
                if rect.intersects(QRectF(event.rect())):
                    painter.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5))
        painter.end()
