"""One rating dimension on screen: its question, end labels, the scale and its number."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QApplication, QGridLayout, QLabel, QSizePolicy, QWidget

from meaningbench.queries.annotation import Scale
from meaningbench.ui.annotation.scales import blend, make_scale

UNSET_TEXT = "—"
# Hidden-number mode: the rater sees that the scale is set, never the number.
SET_TEXT = "✓"


def format_value(value: float | None, hidden: bool = False) -> str:
    if value is None:
        return UNSET_TEXT
    return SET_TEXT if hidden else f"{value:g}"


class DimensionRow(QWidget):
    def __init__(
        self,
        scale: Scale,
        parent: QWidget | None = None,
        *,
        hidden_number: bool = False,
        compact: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(f"dimension-{scale.name}")
        self.hidden_number = hidden_number
        self.scale = make_scale(scale, self)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(14)
        grid.setVerticalSpacing(6)

        question = scale.question or scale.name.capitalize()
        self.question = QLabel(question)
        self.question.setWordWrap(True)

        self.low = QLabel(scale.label_low)
        self.high = QLabel(scale.label_high)
        for label, align in (
            (self.low, Qt.AlignmentFlag.AlignRight),
            (self.high, Qt.AlignmentFlag.AlignLeft),
        ):
            label.setAlignment(align | Qt.AlignmentFlag.AlignVCenter)
            label.setWordWrap(True)
            label.setFixedWidth(150)
            label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)

        self.number = QLabel(UNSET_TEXT)
        self.number.setObjectName("valueDisplay")
        self.number.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._apply_fonts()
        self.number.setToolTip(
            "✓ means rated; — means not rated yet"
            if hidden_number
            else "The value you gave; — means not rated yet"
        )

        grid.addWidget(self.question, 0, 1, 1, 3)
        grid.addWidget(self.low, 1, 0)
        grid.addWidget(self.scale, 1, 1, 1, 2)
        grid.addWidget(self.high, 1, 3)
        grid.addWidget(self.number, 1, 4)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(2, 1)
        if scale.point_labels:
            # Every point carries its own label: end labels would say the same twice.
            self.low.hide()
            self.high.hide()
        if compact:
            # Several rows side by side (sxs): the question and end labels are shown once
            # above them, and a narrow column keeps its width for the slider.
            for label in (self.question, self.low, self.high):
                label.hide()
            grid.setColumnMinimumWidth(0, 0)
            grid.setColumnMinimumWidth(3, 0)
        self._shown_unset: bool | None = None
        self.scale.valueChanged.connect(self._show_value)
        self.restyle(self.palette())

    def restyle(self, pal: QPalette) -> None:
        """Tints derived from the palette (again after a theme change)."""
        self._pal = QPalette(pal)
        text = pal.color(QPalette.ColorRole.WindowText)
        window = pal.color(QPalette.ColorRole.Window)
        for label in (self.low, self.high):
            lp = label.palette()
            lp.setColor(QPalette.ColorRole.WindowText, blend(text, window, 0.35))
            label.setPalette(lp)
        self._shown_unset = None
        self._show_value(self.scale.value())

    @property
    def name(self) -> str:
        return self.scale.scale.name

    def _show_value(self, value: float | None) -> None:
        self.number.setText(format_value(value, self.hidden_number))
        unset = value is None
        if unset == self._shown_unset:
            return  # palette changes re-polish the label: only when the state flips
        self._shown_unset = unset
        pal = self.number.palette()
        text = self._pal.color(QPalette.ColorRole.WindowText)
        window = self._pal.color(QPalette.ColorRole.Window)
        # A muted dash for "not rated yet"; full contrast once there is a value.
        pal.setColor(QPalette.ColorRole.WindowText, blend(text, window, 0.55) if unset else text)
        self.number.setPalette(pal)

    def _apply_fonts(self) -> None:
        # Follows the application font, so Ctrl++ / Ctrl+- reach the question and number.
        base = QFont(QApplication.font())
        qf = QFont(base)
        qf.setPointSizeF(base.pointSizeF() * 1.12)
        qf.setWeight(QFont.Weight.DemiBold)
        self.question.setFont(qf)
        nf = QFont(base)
        nf.setPointSizeF(base.pointSizeF() * 1.9)
        nf.setWeight(QFont.Weight.DemiBold)
        nf.setStyleHint(QFont.StyleHint.Monospace)
        self.number.setFont(nf)
        self.number.setFixedWidth(max(78, self.number.fontMetrics().horizontalAdvance("100") + 24))

    def event(self, e: QEvent) -> bool:
        # A top-level widget hears ApplicationFontChange; a child only FontChange, when the
        # application font reaches it through its parents.
        if e.type() in (QEvent.Type.ApplicationFontChange, QEvent.Type.FontChange):
            self._apply_fonts()
        return super().event(e)
