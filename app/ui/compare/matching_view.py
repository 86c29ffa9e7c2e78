"""The BERTScore matching view: two rows of tokens and the greedy matches between them.

Reference (or source) tokens on top, candidate tokens below. Every line is one best match
the score was computed from, coloured by its cosine similarity on a ramp whose range is
printed in the legend. Recall lines (reference → candidate) are solid, precision lines
(candidate → reference) dashed, a pair that chose each other is one thicker line. Hovering
a token keeps its lines and dims the rest; tokens that nothing on the other side chose are
outlined in red: what the other sentence does not cover.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QLinearGradient,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QScrollArea, QSizePolicy, QWidget

from meaningbench.queries.explanations import (
    Line,
    TokenAlignment,
    alignment_lines,
    display_token,
    is_special,
)

# Viridis without its pale yellow end, which vanishes on a white background.
RAMP = ("#440154", "#3b528b", "#21918c", "#35b779", "#8fd744")
UNPICKED = QColor("#d62728")
MARGIN_X, TOP, ROW_GAP, MAX_ROW_GAP, LEGEND_H = 24.0, 70.0, 150.0, 320.0, 50.0
GUTTER = 78.0  # left of the rows: which sentence each row is
PAD_X, PAD_Y, MIN_GAP = 7.0, 5.0, 6.0
DIM_ALPHA = 28
LEGEND_LINES = (
    ("recall (reference → output)", Qt.PenStyle.SolidLine, 1.7),
    ("precision (output → reference)", Qt.PenStyle.DashLine, 1.7),
    ("mutual best match", Qt.PenStyle.SolidLine, 2.6),
)
UNPICKED_LABEL = "chosen by no token on the other side"


def ramp_colour(t: float) -> QColor:
    """Colour at position t ∈ [0, 1] of the ramp (clamped)."""
    t = min(1.0, max(0.0, t))
    pos = t * (len(RAMP) - 1)
    k = min(int(pos), len(RAMP) - 2)
    a, b = QColor(RAMP[k]), QColor(RAMP[k + 1])
    f = pos - k
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * f,
        a.greenF() + (b.greenF() - a.greenF()) * f,
        a.blueF() + (b.blueF() - a.blueF()) * f,
    )


@dataclass(frozen=True)
class TokenBox:
    side: str  # "ref" | "cand"
    index: int
    rect: QRectF


class MatchingView(QWidget):
    """Draws one TokenAlignment; `hovered` and `highlighted_lines()` expose the hover state."""

    hovered_changed = Signal(object)  # ("ref" | "cand", index) or None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.alignment: TokenAlignment | None = None
        self.lines: list[Line] = []
        self.boxes: list[TokenBox] = []
        self.hovered: tuple[str, int] | None = None
        self.ref_label = "reference"
        self.sim_range = (0.0, 1.0)
        self._size = QSize(400, int(TOP + ROW_GAP + 2 * 30 + LEGEND_H))

    # -- state ------------------------------------------------------------------------

    def set_alignment(self, alignment: TokenAlignment | None, ref_label: str = "reference") -> None:
        self.alignment = alignment
        self.ref_label = ref_label
        self.lines = alignment_lines(alignment) if alignment is not None else []
        sims = [line.sim for line in self.lines]
        lo = math.floor(min(sims) * 10) / 10 if sims else 0.0
        self.sim_range = (min(lo, 0.9), 1.0)
        self.hovered = None
        self._layout()
        self.update()

    def highlighted_lines(self) -> list[Line]:
        """The lines drawn at full strength: all of them, or the hovered token's."""
        if self.hovered is None:
            return list(self.lines)
        side, index = self.hovered
        return [ln for ln in self.lines if (ln.ref if side == "ref" else ln.cand) == index]

    def token_similarity(self, side: str, index: int) -> float:
        """The hovered token's similarity to its own best match."""
        assert self.alignment is not None
        sims = self.alignment.ref_sim if side == "ref" else self.alignment.cand_sim
        return sims[index]

    def box(self, side: str, index: int) -> TokenBox:
        return next(b for b in self.boxes if b.side == side and b.index == index)

    # -- geometry ---------------------------------------------------------------------

    def _token_font(self) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.08)
        return font

    def _layout(self) -> None:
        self.boxes = []
        if self.alignment is None:
            self._size = QSize(400, 120)
            self.updateGeometry()
            return
        fm = QFontMetricsF(self._token_font())
        height = fm.height() + 2 * PAD_Y
        rows = {"ref": self.alignment.ref_tokens, "cand": self.alignment.cand_tokens}
        widths = {
            side: [fm.horizontalAdvance(display_token(t)) + 2 * PAD_X for t in toks]
            for side, toks in rows.items()
        }
        natural = {s: sum(w) + MIN_GAP * max(0, len(w) - 1) for s, w in widths.items()}
        total = max(natural.values())
        # Taller than needed: longer lines are easier to follow, up to a point.
        spare = self.height() - (TOP + 2 * height + ROW_GAP + LEGEND_H + 8)
        gap_y = ROW_GAP + min(MAX_ROW_GAP - ROW_GAP, max(0.0, spare))
        # Centred in a wider widget; the scroll area scrolls a narrower one.
        left = MARGIN_X + GUTTER + max(0.0, (self.width() - 2 * MARGIN_X - GUTTER - total) / 2)
        for side, ws in widths.items():
            # The shorter row is spread to the longer one's width so that lines stay steep.
            gap = MIN_GAP if len(ws) < 2 else (total - sum(ws)) / (len(ws) - 1)
            x = left + (total - ws[0]) / 2 if len(ws) == 1 else left
            y = TOP if side == "ref" else TOP + height + gap_y
            for k, w in enumerate(ws):
                self.boxes.append(TokenBox(side, k, QRectF(x, y, w, height)))
                x += w + gap
        width = max(total + GUTTER, self._legend_width())
        self._size = QSize(
            int(width + 2 * MARGIN_X), int(TOP + 2 * height + ROW_GAP + LEGEND_H + 8)
        )
        self.updateGeometry()

    def _small_font(self) -> QFont:
        small = QFont(self.font())
        small.setPointSizeF(small.pointSizeF() * 0.9)
        return small

    def _legend_width(self) -> float:
        fm = QFontMetricsF(self._small_font())
        labels = [label for label, *_ in LEGEND_LINES] + ["cosine similarity", UNPICKED_LABEL]
        return sum(fm.horizontalAdvance(t) for t in labels) + 180 + 10 + 22 + 3 * 50 + 24

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._layout()

    def sizeHint(self) -> QSize:
        return self._size

    def minimumSizeHint(self) -> QSize:
        # The whole drawing: a narrower widget would cut the tokens off on the right, and
        # in a scroll area it is the minimum that makes the scroll bars appear.
        return self._size

    def _anchor(self, line: Line) -> tuple[QPointF, QPointF]:
        top = self.box("ref", line.ref).rect
        bottom = self.box("cand", line.cand).rect
        # Recall leaves left of centre, precision right: crossing directions stay apart.
        shift = {"recall": -0.18, "precision": 0.18, "mutual": 0.0}[line.kind]
        a = QPointF(top.center().x() + shift * top.width(), top.bottom())
        b = QPointF(bottom.center().x() + shift * bottom.width(), bottom.top())
        return a, b

    # -- painting ---------------------------------------------------------------------

    def colour_for(self, sim: float) -> QColor:
        lo, hi = self.sim_range
        return ramp_colour((sim - lo) / (hi - lo) if hi > lo else 1.0)

    def paintEvent(self, _event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        p.fillRect(self.rect(), pal.base())
        if self.alignment is None:
            p.setPen(pal.placeholderText().color())
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No alignment to show")
            return
        self._paint_header(p)
        strong = set(self.highlighted_lines())
        ordered = sorted(self.lines, key=lambda ln: (ln in strong, ln.sim))
        for line in ordered:
            self._paint_line(p, line, strong=line in strong)
        self._paint_tokens(p)
        self._paint_legend(p)

    def _paint_header(self, p: QPainter) -> None:
        a = self.alignment
        assert a is not None
        pal = self.palette()
        font = QFont(self.font())
        font.setBold(True)
        p.setFont(font)
        p.setPen(pal.text().color())
        p.drawText(
            QPointF(MARGIN_X, 22),
            f"P {a.P:.3f}    R {a.R:.3f}    F1 {a.F:.3f}",
        )
        p.setFont(self.font())
        p.setPen(pal.placeholderText().color())
        text = self._hover_text() or (
            f"Top: {self.ref_label} tokens · bottom: output tokens · hover a token to follow it"
        )
        p.drawText(QPointF(MARGIN_X, 44), text)
        small = self._small_font()
        small.setBold(True)
        p.setFont(small)
        for side, label in (("ref", self.ref_label.upper()), ("cand", "OUTPUT")):
            row = [b.rect for b in self.boxes if b.side == side]
            if row:
                left = min(b.rect.left() for b in self.boxes)
                gutter = QRectF(left - GUTTER, row[0].top(), GUTTER - 10, row[0].height())
                p.drawText(
                    gutter, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, label
                )

    def _hover_text(self) -> str:
        if self.hovered is None or self.alignment is None:
            return ""
        side, i = self.hovered
        a = self.alignment
        if side == "ref":
            token, other = a.ref_tokens[i], a.cand_tokens[a.ref_best[i]]
            role = "recall"
        else:
            token, other = a.cand_tokens[i], a.ref_tokens[a.cand_best[i]]
            role = "precision"
        picked = i not in (a.unpicked_ref() if side == "ref" else a.unpicked_cand())
        note = "" if picked else " · nothing on the other side chose it"
        return (
            f"“{display_token(token)}” → “{display_token(other)}”   similarity "
            f"{self.token_similarity(side, i):.3f} ({role}){note}"
        )

    def _paint_line(self, p: QPainter, line: Line, *, strong: bool) -> None:
        a, b = self._anchor(line)
        colour = QColor(self.colour_for(line.sim))
        if not strong:
            colour.setAlpha(DIM_ALPHA)
        width = {"mutual": 2.6, "recall": 1.7, "precision": 1.7}[line.kind]
        if strong and self.hovered is not None:
            width += 1.2
        pen = QPen(colour, width)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        if line.kind == "precision":
            pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        path = QPainterPath(a)
        mid = (a.y() + b.y()) / 2
        path.cubicTo(QPointF(a.x(), mid), QPointF(b.x(), mid), b)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(path)

    def _paint_tokens(self, p: QPainter) -> None:
        assert self.alignment is not None
        pal = self.palette()
        unpicked = {
            "ref": self.alignment.unpicked_ref(),
            "cand": self.alignment.unpicked_cand(),
        }
        hovered_related: set[tuple[str, int]] = set()
        for line in self.highlighted_lines() if self.hovered else []:
            hovered_related |= {("ref", line.ref), ("cand", line.cand)}
        p.setFont(self._token_font())
        for box in self.boxes:
            tokens = self.alignment.ref_tokens if box.side == "ref" else self.alignment.cand_tokens
            token = tokens[box.index]
            fill = QColor(pal.alternateBase().color())
            if self.hovered == (box.side, box.index):
                fill = QColor(pal.highlight().color())
                fill.setAlpha(70)
            elif (box.side, box.index) in hovered_related:
                fill = QColor(pal.highlight().color())
                fill.setAlpha(35)
            if box.index in unpicked[box.side]:
                pen = QPen(UNPICKED, 2.0)
            else:
                pen = QPen(pal.mid().color(), 1.0)
            p.setPen(pen)
            p.setBrush(fill)
            p.drawRoundedRect(box.rect, 5, 5)
            colour = pal.placeholderText().color() if is_special(token) else pal.text().color()
            if self.hovered is not None and (box.side, box.index) not in hovered_related:
                colour.setAlpha(110)
            p.setPen(colour)
            p.drawText(box.rect, Qt.AlignmentFlag.AlignCenter, display_token(token))

    def _paint_legend(self, p: QPainter) -> None:
        pal = self.palette()
        y = max((b.rect.bottom() for b in self.boxes), default=TOP) + 26
        x = MARGIN_X
        small = self._small_font()
        p.setFont(small)
        fm = QFontMetricsF(small)
        p.setPen(pal.text().color())
        p.drawText(QPointF(x, y + 9), "cosine similarity")
        x += fm.horizontalAdvance("cosine similarity") + 10
        bar = QRectF(x, y, 180, 11)
        grad = QLinearGradient(bar.topLeft(), bar.topRight())
        for k, c in enumerate(RAMP):
            grad.setColorAt(k / (len(RAMP) - 1), QColor(c))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(grad)
        p.drawRoundedRect(bar, 3, 3)
        p.setPen(pal.text().color())
        lo, hi = self.sim_range
        p.drawText(QPointF(bar.left(), bar.bottom() + 14), f"{lo:.1f}")
        p.drawText(
            QPointF(bar.right() - fm.horizontalAdvance(f"{hi:.1f}"), bar.bottom() + 14), f"{hi:.1f}"
        )
        x = bar.right() + 22
        for label, style, width in LEGEND_LINES:
            pen = QPen(QColor(RAMP[2]), width)
            pen.setStyle(style)
            p.setPen(pen)
            p.drawLine(QPointF(x, y + 5), QPointF(x + 26, y + 5))
            p.setPen(pal.text().color())
            p.drawText(QPointF(x + 32, y + 9), label)
            x += 32 + fm.horizontalAdvance(label) + 18
        p.setPen(QPen(UNPICKED, 2.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(QRectF(x, y - 1, 18, 13), 3, 3)
        p.setPen(pal.text().color())
        p.drawText(QPointF(x + 24, y + 9), UNPICKED_LABEL)

    # -- interaction ------------------------------------------------------------------

    def token_at(self, pos: QPointF) -> tuple[str, int] | None:
        for box in self.boxes:
            if box.rect.adjusted(-2, -2, 2, 2).contains(pos):
                return box.side, box.index
        return None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        hit = self.token_at(event.position())
        if hit != self.hovered:
            self.hovered = hit
            self.setToolTip(self._hover_text())
            self.hovered_changed.emit(hit)
            self.update()
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        if self.hovered is not None:
            self.hovered = None
            self.hovered_changed.emit(None)
            self.update()
        super().leaveEvent(event)


class MatchingScroll(QScrollArea):
    """The matching view in a scroll area whose wheel also scrolls sideways: a long
    sentence is wider than the window but rarely taller, and a wheel that turns an absent
    vertical bar would do nothing."""

    def __init__(self, view: MatchingView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidget(view)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt override
        vertical, horizontal = self.verticalScrollBar(), self.horizontalScrollBar()
        delta = event.angleDelta()
        sideways = abs(delta.x()) > abs(delta.y())
        if not sideways and vertical.maximum() == vertical.minimum() and horizontal.maximum():
            step = horizontal.singleStep() * 3 * delta.y() / 120
            horizontal.setValue(int(horizontal.value() - step))
            event.accept()
            return
        super().wheelEvent(event)
