"""The source and the output, side by side or stacked, in large readable text.

The texts (text_panel.py) never take keyboard focus, so every key goes to the scales and
the screen; the mouse can still select and copy them. Word-level
differences can be tinted (a study setting, off by default because highlighting steers
the rater's eye to the changes).

Each text scrolls in its own pane, under a caption that stays put, so a long pair never
pushes the scales off the screen and a 2,000-word original can be read beside a
1,200-word simplification. The panes scroll together by default, each at the same share
of its own length (the texts rarely have the same length); Shift+Page Up / Page Down turn
a page in both, with the keys staying on the scales.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QPalette, QResizeEvent, QTextDocument
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QBoxLayout,
    QSizePolicy,
    QWidget,
)

from meaningbench.queries.word_diff import Segment, word_diff
from meaningbench.ui.annotation.scales import blend
from meaningbench.ui.annotation.text_panel import MIN_TEXT_HEIGHT, TextPanel


def _segments_html(segments: list[Segment], tint: QColor) -> str:
    out = []
    for seg in segments:
        if not seg.changed:
            out.append(html.escape(seg.text))
            continue
        # The tint covers the word(s) only, not the space that follows them.
        body = seg.text.rstrip()
        tail = seg.text[len(body) :]
        out.append(
            f'<span style="background-color:{tint.name()};">{html.escape(body)}</span>'
            + html.escape(tail)
        )
    return "".join(out)


class PairView(QWidget):
    """The two panels; as tall as the longer text needs, up to what the screen leaves it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = TextPanel("Original")
        self.output = TextPanel("Simplified")
        self._layout = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(16)
        self._layout.addWidget(self.source, 1)
        self._layout.addWidget(self.output, 1)
        self.highlight = False
        self.linked = True  # the panes scroll together
        self._syncing = False
        self._base = self.palette().color(QPalette.ColorRole.Base)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.source.scrolled.connect(lambda: self._follow(self.source, self.output))
        self.output.scrolled.connect(lambda: self._follow(self.output, self.source))

    def panes(self) -> tuple[QAbstractScrollArea, QAbstractScrollArea]:
        return self.source.pane, self.output.pane

    # -- size --------------------------------------------------------------------------

    def sizeHint(self) -> QSize:
        width = self.width() or 1000
        spacing = self._layout.spacing()
        if self.stacked:
            h = self.source.content_height(width) + spacing + self.output.content_height(width)
        else:
            half = (width - spacing) // 2
            h = max(self.source.content_height(half), self.output.content_height(half))
        return QSize(width, max(MIN_TEXT_HEIGHT, h))

    def minimumSizeHint(self) -> QSize:
        stacked = 2 if self.stacked else 1
        return QSize(200, stacked * MIN_TEXT_HEIGHT + (stacked - 1) * self._layout.spacing())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.updateGeometry()  # a new width wraps the texts to a new height

    # -- scrolling -----------------------------------------------------------------------

    def _follow(self, moved: TextPanel, other: TextPanel) -> None:
        if not self.linked or self._syncing:
            return
        src, dst = moved.pane.verticalScrollBar(), other.pane.verticalScrollBar()
        if src.maximum() <= 0:
            return
        self._syncing = True
        try:
            dst.setValue(round(src.value() / src.maximum() * dst.maximum()))
        finally:
            self._syncing = False

    def page(self, pages: int) -> None:
        """Turn `pages` pages (negative: back) in both panes, each by its own height."""
        for pane in self.panes():
            bar = pane.verticalScrollBar()
            self._syncing = True  # each pane moves by its own page, not by the other's share
            try:
                bar.setValue(bar.value() + pages * bar.pageStep())
            finally:
                self._syncing = False

    def scroll_to_top(self) -> None:
        for pane in self.panes():
            pane.verticalScrollBar().setValue(0)

    def overflows(self) -> bool:
        return any(pane.verticalScrollBar().maximum() > 0 for pane in self.panes())

    # -- look and texts ------------------------------------------------------------------

    def style_panels(self, pal: QPalette) -> None:
        """Colours from the screen's palette (a style sheet stops the pair inheriting it)."""
        self._base = pal.color(QPalette.ColorRole.Base)
        base = pal.color(QPalette.ColorRole.Base)
        text = pal.color(QPalette.ColorRole.Text)
        border = blend(base, text, 0.10)
        self.setStyleSheet(
            f"QFrame#textPanel {{ background: {base.name()}; border: 1px solid {border.name()};"
            " border-radius: 12px; }"
            f"QLabel#caption {{ color: {blend(text, base, 0.5).name()}; }}"
            f"QLabel#pairText {{ color: {text.name()}; }}"
            f"QTextBrowser#pairText {{ color: {text.name()}; background: {base.name()}; }}"
            f"QScrollArea, QWidget#paneBody {{ background: {base.name()}; }}"
        )

    @property
    def stacked(self) -> bool:
        return self._layout.direction() == QBoxLayout.Direction.TopToBottom

    def set_stacked(self, stacked: bool) -> None:
        self._layout.setDirection(
            QBoxLayout.Direction.TopToBottom if stacked else QBoxLayout.Direction.LeftToRight
        )
        self.updateGeometry()

    def set_pair(self, source: str, output: str) -> None:
        self.source.count_words(source)
        self.output.count_words(output)
        if not self.highlight:
            self.source.set_plain(source)
            self.output.set_plain(output)
        else:
            base = self._base
            removed = blend(base, QColor("#e0564f"), 0.28)
            added = blend(base, QColor("#3fa66a"), 0.30)
            left, right = word_diff(source, output)
            # pre-wrap: rich text would otherwise fold line breaks and runs of spaces.
            wrap = '<div style="white-space:pre-wrap;">{}</div>'
            self.source.set_rich(wrap.format(_segments_html(left, removed)))
            self.output.set_rich(wrap.format(_segments_html(right, added)))
        self.updateGeometry()
        self.scroll_to_top()

    def texts(self) -> tuple[str, str]:
        """What the rater reads, as plain text (tests compare it with the item)."""
        out = []
        for panel in (self.source, self.output):
            if panel.text.textFormat() == Qt.TextFormat.PlainText:
                out.append(panel.text.text())
            else:
                doc = QTextDocument()
                doc.setHtml(panel.text.text())
                out.append(doc.toPlainText())
        return out[0], out[1]
