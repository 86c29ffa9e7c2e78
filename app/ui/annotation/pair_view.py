"""The source and the output, side by side or stacked, in large readable text.

The texts are word-wrapped labels that never take keyboard focus, so every key goes to
the scales and the screen; the mouse can still select and copy them. Word-level
differences can be tinted (a study setting, off by default because highlighting steers
the rater's eye to the changes). A very long pair scrolls instead of pushing the scales
off the screen.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QApplication,
    QBoxLayout,
    QFrame,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from meaningbench.annotation.diff import Segment, word_diff
from meaningbench.ui.annotation.scales import blend

TEXT_SCALE = 1.55  # the pair's text size relative to the interface font
MIN_TEXT_HEIGHT = 150  # a short pair still gets panels of a calm, steady size


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


class TextPanel(QFrame):
    """A caption ("Original", "Simplified") over a read-only, word-wrapped text."""

    def __init__(self, caption: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("textPanel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 16, 24, 20)
        layout.setSpacing(10)
        self.caption = QLabel(caption.upper())
        self.caption.setObjectName("caption")
        self.text = QLabel()
        self.text.setObjectName("pairText")
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.text.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self._apply_fonts()
        layout.addWidget(self.caption)
        layout.addWidget(self.text)
        layout.addStretch(1)
        self.setMinimumHeight(MIN_TEXT_HEIGHT)

    def _apply_fonts(self) -> None:
        # From the application font, not our own: Ctrl++ / Ctrl+- change the application
        # font, and the sentences being rated must grow and shrink with it.
        base = QFont(QApplication.font())
        cap_font = QFont(base)
        cap_font.setPointSizeF(base.pointSizeF() * 0.82)
        cap_font.setWeight(QFont.Weight.DemiBold)
        cap_font.setLetterSpacing(QFont.SpacingType.PercentageSpacing, 114)
        self.caption.setFont(cap_font)
        font = QFont(base)
        font.setPointSizeF(base.pointSizeF() * TEXT_SCALE)
        self.text.setFont(font)

    def event(self, e: QEvent) -> bool:
        # A top-level widget hears ApplicationFontChange; a child only FontChange, when the
        # application font reaches it through its parents.
        if e.type() in (QEvent.Type.ApplicationFontChange, QEvent.Type.FontChange):
            self._apply_fonts()
        return super().event(e)

    def use_text_widget(self, label: QLabel) -> None:
        """Show `label` (a span editor, say) in place of the plain text label."""
        layout = self.layout()
        assert layout is not None
        layout.replaceWidget(self.text, label)
        self.text.deleteLater()
        self.text = label
        self._apply_fonts()

    def set_plain(self, text: str) -> None:
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setText(text)

    def set_rich(self, markup: str) -> None:
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setText(markup)


class _Fit(QScrollArea):
    """A scroll area as tall as its content (up to what the layout allows), never taller."""

    def sizeHint(self) -> QSize:
        inner = self.widget()
        width = self.viewport().width() or 800
        h = inner.heightForWidth(width) if inner.hasHeightForWidth() else inner.sizeHint().height()
        return QSize(width, max(MIN_TEXT_HEIGHT, h) + 2 * self.frameWidth())

    def minimumSizeHint(self) -> QSize:
        return QSize(200, MIN_TEXT_HEIGHT)

    def resizeEvent(self, event) -> None:  # noqa: ANN001 - Qt's event type
        super().resizeEvent(event)
        self.updateGeometry()

    def keyPressEvent(self, event) -> None:  # noqa: ANN001 - Qt's event type
        # Keys a span editor inside passes on (Alt+←, Enter) are the screen's: a scroll
        # area would take the arrows to scroll.
        event.ignore()


class PairView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = TextPanel("Original")
        self.output = TextPanel("Simplified")
        inner = QWidget()
        self._layout = QBoxLayout(QBoxLayout.Direction.LeftToRight, inner)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(16)
        self._layout.addWidget(self.source, 1)
        self._layout.addWidget(self.output, 1)
        self.scroll = _Fit()
        self.scroll.setWidget(inner)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)
        self.highlight = False
        self._base = self.palette().color(QPalette.ColorRole.Base)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def style_panels(self, pal: QPalette) -> None:
        """Colours from the screen's palette (a style sheet stops the pair inheriting it)."""
        self._base = pal.color(QPalette.ColorRole.Base)
        base = pal.color(QPalette.ColorRole.Base)
        text = pal.color(QPalette.ColorRole.Text)
        window = pal.color(QPalette.ColorRole.Window)
        border = blend(base, text, 0.10)
        self.setStyleSheet(
            f"QFrame#textPanel {{ background: {base.name()}; border: 1px solid {border.name()};"
            " border-radius: 12px; }"
            f"QLabel#caption {{ color: {blend(text, base, 0.5).name()}; }}"
            f"QLabel#pairText {{ color: {text.name()}; }}"
            f"QScrollArea, QScrollArea > QWidget > QWidget {{ background: {window.name()}; }}"
        )

    @property
    def stacked(self) -> bool:
        return self._layout.direction() == QBoxLayout.Direction.TopToBottom

    def set_stacked(self, stacked: bool) -> None:
        self._layout.setDirection(
            QBoxLayout.Direction.TopToBottom if stacked else QBoxLayout.Direction.LeftToRight
        )
        self.scroll.updateGeometry()

    def set_pair(self, source: str, output: str) -> None:
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
        self.scroll.updateGeometry()
        self.scroll.verticalScrollBar().setValue(0)

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
