"""The "Which metric" tab's stopping signal: whether the ranking has settled, in words,
and the agreement of resamples at each share of the ratings as a row of small bars.

The figures are `meaningbench.queries.which_metric.compute_stability`, computed by the
tab in a worker job after each ranking; this module only draws them.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from meaningbench.queries.which_metric import Stability
from meaningbench.ui.dashboard.plots import PlotColors
from meaningbench.ui.wording import counted

BAR_GAP = 6
LABEL_HEIGHT = 16


class AgreementBars(QWidget):
    """One bar per checkpoint of the trend: the share of resamples that agree, 0 to 1,
    with the target as a dashed line; the share of ratings in under each bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whichMetricAgreementBars")
        self.colors = PlotColors.from_palette()
        # (share of ratings, ratings, agreement or None), for tests and the tooltip
        self.points: list[tuple[float, int, float | None]] = []
        self.target = 0.95
        self.setMinimumSize(QSize(300, 72))
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(320, 84)

    def set_stability(self, stability: Stability | None) -> None:
        self.points = []
        if stability is not None:
            self.target = stability.options.target
            self.points = [(p.fraction, p.ratings, p.agreement) for p in stability.trend_points]
        lines = [
            f"{f:.0%} of ratings ({n:,}): " + ("–" if a is None else f"{a:.0%} of resamples agree")
            for f, n, a in self.points
        ]
        self.setToolTip(
            "Share of resamples whose top cluster is the current one, after each share "
            "of the ratings in (dashed: the target)\n" + "\n".join(lines)
        )
        self.update()

    def apply_colors(self, colors: PlotColors) -> None:
        self.colors = colors
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        area = QRectF(self.rect()).adjusted(2, 4, -2, -LABEL_HEIGHT)
        painter.setPen(QPen(self.colors.grid, 1))
        painter.drawLine(area.bottomLeft(), area.bottomRight())
        n = len(self.points)
        if n:
            width = (area.width() - BAR_GAP * (n - 1)) / n
            font = painter.font()
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
            painter.setFont(font)
            for k, (fraction, _ratings, agreement) in enumerate(self.points):
                x = area.left() + k * (width + BAR_GAP)
                if agreement is not None:
                    color = QColor(
                        self.colors.bar if agreement >= self.target else self.colors.muted
                    )
                    h = area.height() * agreement
                    painter.fillRect(QRectF(x, area.bottom() - h, width, h), color)
                    # The share itself, inside the bar's top (or just above a short bar).
                    inside = h >= LABEL_HEIGHT + 2
                    top = area.bottom() - h - (0 if inside else LABEL_HEIGHT)
                    painter.setPen(QPen(self.colors.background if inside else self.colors.text))
                    value = QRectF(x, top, width, LABEL_HEIGHT)
                    painter.drawText(value, Qt.AlignmentFlag.AlignCenter, f"{agreement:.0%}")
                painter.setPen(QPen(self.colors.text))
                label = QRectF(x - BAR_GAP / 2, area.bottom() + 1, width + BAR_GAP, LABEL_HEIGHT)
                painter.drawText(label, Qt.AlignmentFlag.AlignCenter, f"{fraction:.0%}")
        y = area.bottom() - area.height() * self.target
        pen = QPen(self.colors.accent, 1.5, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawLine(QPointF(area.left(), y), QPointF(area.right(), y))
        painter.end()


class StabilityView(QWidget):
    """The signal's two sentences, what they rest on, and the bars."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stability: Stability | None = None
        self.verdict = QLabel()
        self.verdict.setObjectName("whichMetricVerdict")
        font = self.verdict.font()
        font.setBold(True)
        self.verdict.setFont(font)
        self.sentence = QLabel()
        self.sentence.setObjectName("whichMetricStability")
        self.sentence.setWordWrap(True)
        self.trend = QLabel()
        self.trend.setObjectName("whichMetricStabilityTrend")
        self.trend.setWordWrap(True)
        self.basis = QLabel()
        self.basis.setObjectName("mutedLabel")
        self.basis.setWordWrap(True)
        self.bars = AgreementBars()
        caption = QLabel("Resamples that agree, after each share of the ratings")
        caption.setObjectName("mutedLabel")
        caption.setToolTip("Dashed line: the target agreement")
        bars = QVBoxLayout()
        bars.setContentsMargins(0, 0, 0, 0)
        bars.setSpacing(2)
        bars.addWidget(caption)
        bars.addWidget(self.bars, 1)
        text = QVBoxLayout()
        text.setContentsMargins(0, 0, 0, 0)
        text.setSpacing(3)
        for label in (self.verdict, self.sentence, self.trend, self.basis):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            text.addWidget(label)
        text.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(12)
        layout.addLayout(text, 1)
        layout.addLayout(bars)

    def set_stability(self, stability: Stability) -> None:
        self.stability = stability
        verdict = stability.verdict()
        self.verdict.setText(f"{verdict[:1].upper()}{verdict[1:]}.")
        self.sentence.setText(stability.sentence())
        self.trend.setText("" if stability.message else stability.trend_sentence())
        self.trend.setVisible(bool(self.trend.text()))
        o = stability.options
        basis = (
            ""
            if stability.message
            else (
                f"{counted(stability.ratings, 'human rating')} · {o.resamples} resamples of "
                f"sources at each share of the ratings (bars), each ranked again with "
                f"{o.inner_resamples} resamples · seed {o.seed} · target {o.target:.0%}"
            )
        )
        # What the figures rest on: on hover, so that the sentences keep the room.
        self.basis.setText(basis)
        self.basis.hide()
        for label in (self.verdict, self.sentence, self.trend):
            label.setToolTip(basis)
        self.bars.set_stability(stability)

    def apply_colors(self, colors: PlotColors) -> None:
        self.bars.apply_colors(colors)
