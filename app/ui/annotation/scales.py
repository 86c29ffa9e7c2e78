"""Rating scales that start unset: a 0–100 slider and a row of Likert 1–5 buttons.

A stock QSlider always has a value and a handle somewhere, which is exactly the default
that biases raters. These widgets have no value until the rater gives one: the track is
grey and has no handle, and the number beside it reads "—". The value they were reset to
(None for a new item, the earlier rating when revising) is kept as the start value.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from meaningbench.queries.annotation import Scale

# Digits typed within this many seconds of each other form one number (7, 5 → 75).
DIGIT_TIMEOUT_S = 0.9
NAV_MODIFIERS = Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ControlModifier
# A digit held with one of these is a chord (Ctrl+3 goes to a page of the window), never a
# value. Shift is not among them: some layouts (French AZERTY) type digits with Shift.
CHORD_MODIFIERS = NAV_MODIFIERS | Qt.KeyboardModifier.MetaModifier
PAGE_KEYS = (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown)


def held(event: QKeyEvent) -> bool:
    """A key's auto-repeat while it is held down. It types no second digit and submits no
    further item: a key held a moment too long must not turn 5 into 55 or rate the next
    items unseen. (Arrows repeat: holding one is how a slider is moved far.)"""
    return event.isAutoRepeat()


def typed_digit(event: QKeyEvent) -> int | None:
    """The digit a key types into a scale (the number row or the keypad), or None: not a
    digit, or a digit held with Ctrl, Alt or Meta."""
    key = event.key()
    if not Qt.Key.Key_0 <= key <= Qt.Key.Key_9 or event.modifiers() & CHORD_MODIFIERS:
        return None
    return key - Qt.Key.Key_0


def _painter(widget: QWidget) -> tuple[QPainter, tuple[QColor, QColor, QColor]]:
    """An antialiased painter on `widget`, and the palette's base, text and accent colours
    a scale is drawn in."""
    p = QPainter(widget)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    pal = widget.palette()
    return p, (pal.base().color(), pal.text().color(), pal.highlight().color())


def blend(a: QColor, b: QColor, t: float) -> QColor:
    """`a` moved a fraction `t` towards `b` (palette-derived tints for light and dark)."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


class RatingScale(QWidget):
    """Common behaviour: unset state, start value, keyboard steps and typed digits."""

    valueChanged = Signal(object)  # float | None

    def __init__(self, scale: Scale, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scale = scale
        self._value: float | None = None
        self._start: float | None = None
        self._touched = False
        self._digits = ""
        self._digit_at = 0.0
        self.clock: Callable[[], float] = time.monotonic
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(scale.name)

    # -- state ---------------------------------------------------------------------------

    def value(self) -> float | None:
        return self._value

    def start_value(self) -> float | None:
        return self._start

    def is_set(self) -> bool:
        return self._value is not None

    def touched(self) -> bool:
        """Whether the rater changed the value since the item was shown."""
        return self._touched

    def reset(self, value: float | None = None) -> None:
        """Show a new item: unset, or the rater's earlier value when revising."""
        self._value = value
        self._start = value
        self._touched = False
        self._digits = ""
        self.update()
        self.valueChanged.emit(value)

    def set_value(self, value: float) -> None:
        lo, hi = self.scale.min_value, self.scale.max_value
        value = float(min(hi, max(lo, round(value))))
        self._touched = True
        if value != self._value:
            self._value = value
            self.update()
            self.valueChanged.emit(value)
        else:
            self.update()

    def step(self, delta: float) -> None:
        # From unset, steps start at the middle of the scale: the keys then move away from
        # a neutral point rather than from an end.
        if self._value is None:
            mid = (self.scale.min_value + self.scale.max_value) / 2
            self.set_value(round(mid) + delta)
        else:
            self.set_value(self._value + delta)

    def type_digit(self, digit: int) -> bool:
        """Apply a typed digit; False when it means nothing on this scale."""
        raise NotImplementedError

    # -- keys ------------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.modifiers() & CHORD_MODIFIERS:
            event.ignore()  # Alt/Ctrl + arrows navigate: the screen handles them
            return
        key = event.key()
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier and key in PAGE_KEYS:
            event.ignore()  # Shift+Page Up / Down scroll the texts: the screen handles them
            return
        big = 10.0 if not self.scale.is_likert else 1.0
        steps: dict[int, float] = {
            Qt.Key.Key_Left: -1.0,
            Qt.Key.Key_Down: -1.0,
            Qt.Key.Key_Right: 1.0,
            Qt.Key.Key_Up: 1.0,
            Qt.Key.Key_PageUp: big,
            Qt.Key.Key_PageDown: -big,
        }
        if key in steps:
            self._digits = ""
            self.step(steps[key])
        elif key == Qt.Key.Key_Home:
            self.set_value(self.scale.min_value)
        elif key == Qt.Key.Key_End:
            self.set_value(self.scale.max_value)
        elif (digit := typed_digit(event)) is not None:
            # Consumed even when meaningless here (9 on a 1–5 scale) or held down: it must
            # not fall through to the screen and land on another scale.
            if not held(event):
                self.type_digit(digit)
        else:
            event.ignore()
            return
        event.accept()

    def sizeHint(self) -> QSize:
        return QSize(480, 44)

    def _focus_ring(self, p: QPainter) -> None:
        if self.hasFocus():
            ring = QColor(self.palette().highlight().color())
            ring.setAlpha(90)
            p.setPen(QPen(ring, 2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(QRectF(self.rect()).adjusted(1, 1, -1, -1), 10, 10)


class ContinuousScale(RatingScale):
    """A 0–100 slider without a handle until it is first moved."""

    MARGIN = 18.0

    def type_digit(self, digit: int) -> bool:
        now = self.clock()
        fresh = now - self._digit_at > DIGIT_TIMEOUT_S
        # A number is complete after two digits, except 10 which may still become 100.
        if fresh or len(self._digits) >= 3 or (len(self._digits) == 2 and self._digits != "10"):
            self._digits = ""
        self._digits += str(digit)
        self._digit_at = now
        # One digit jumps in tens (7 → 70); more digits are the number itself.
        value = digit * 10 if len(self._digits) == 1 else int(self._digits)
        self.set_value(min(value, self.scale.max_value))
        return True

    def _track(self) -> QRectF:
        h = 6.0
        y = self.height() / 2 - h / 2
        return QRectF(self.MARGIN, y, self.width() - 2 * self.MARGIN, h)

    def _x_of(self, value: float) -> float:
        track = self._track()
        lo, hi = self.scale.min_value, self.scale.max_value
        return track.left() + (value - lo) / (hi - lo) * track.width()

    def _value_at(self, x: float) -> float:
        track = self._track()
        lo, hi = self.scale.min_value, self.scale.max_value
        frac = (x - track.left()) / max(1.0, track.width())
        return lo + min(1.0, max(0.0, frac)) * (hi - lo)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            self._digits = ""
            self.set_value(self._value_at(event.position().x()))
            event.accept()
        else:
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.set_value(self._value_at(event.position().x()))
            event.accept()

    def paintEvent(self, _event: QPaintEvent) -> None:
        p, (base, text, accent) = _painter(self)
        track = self._track()
        empty = blend(base, text, 0.16)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(empty)
        p.drawRoundedRect(track, 3, 3)
        # Quarter ticks, so that a position can be read without a value.
        tick = blend(base, text, 0.35)
        for q in (0.0, 0.25, 0.5, 0.75, 1.0):
            x = track.left() + q * track.width()
            p.setBrush(tick)
            p.drawRoundedRect(QRectF(x - 1, track.bottom() + 5, 2, 6), 1, 1)
        if self._value is not None:
            x = self._x_of(self._value)
            filled = QRectF(track.left(), track.top(), x - track.left(), track.height())
            p.setBrush(accent)
            p.drawRoundedRect(filled, 3, 3)
            p.setBrush(base)
            p.setPen(QPen(accent, 3))
            p.drawEllipse(QPointF(x, track.center().y()), 10, 10)
        self._focus_ring(p)
        p.end()

    def sizeHint(self) -> QSize:
        return QSize(520, 44)


class LikertScale(RatingScale):
    """Five numbered buttons; none is selected until the rater picks one."""

    GAP = 10.0

    def type_digit(self, digit: int) -> bool:
        if self.scale.min_value <= digit <= self.scale.max_value:
            self.set_value(digit)
            return True
        return False

    def _options(self) -> list[int]:
        return list(range(int(self.scale.min_value), int(self.scale.max_value) + 1))

    def _boxes(self) -> list[tuple[int, QRectF]]:
        opts = self._options()
        w = min(160.0, (self.width() - self.GAP * (len(opts) - 1) - 4) / len(opts))
        total = w * len(opts) + self.GAP * (len(opts) - 1)
        x = (self.width() - total) / 2
        h = self.height() - 8
        out = []
        for value in opts:
            out.append((value, QRectF(x, 4, w, h)))
            x += w + self.GAP
        return out

    def mousePressEvent(self, event: QMouseEvent) -> None:
        for value, box in self._boxes():
            if box.contains(event.position()):
                self.setFocus(Qt.FocusReason.MouseFocusReason)
                self.set_value(value)
                event.accept()
                return
        super().mousePressEvent(event)

    def paintEvent(self, _event: QPaintEvent) -> None:
        p, (base, text, accent) = _painter(self)
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setWeight(QFont.Weight.DemiBold)
        p.setFont(font)
        labels = self.scale.point_labels
        small = QFont(self.font())
        small.setPointSizeF(small.pointSizeF() * 0.9)
        on_accent = self.palette().highlightedText().color()
        for i, (value, box) in enumerate(self._boxes()):
            chosen = self._value is not None and int(self._value) == value
            p.setPen(QPen(accent if chosen else blend(base, text, 0.25), 1.5))
            p.setBrush(accent if chosen else blend(base, text, 0.05))
            p.drawRoundedRect(box, 8, 8)
            p.setPen(on_accent if chosen else text)
            if labels:
                # The number on top, the point's label under it: "3 · about half".
                top = QRectF(box.left(), box.top() + 4, box.width(), 26)
                rest = QRectF(box.left() + 6, box.top() + 30, box.width() - 12, box.height() - 34)
                p.setFont(font)
                p.drawText(top, Qt.AlignmentFlag.AlignCenter, str(value))
                p.setFont(small)
                p.drawText(
                    rest,
                    Qt.AlignmentFlag.AlignHCenter
                    | Qt.AlignmentFlag.AlignTop
                    | Qt.TextFlag.TextWordWrap,
                    labels[i] if i < len(labels) else "",
                )
            else:
                p.drawText(box, Qt.AlignmentFlag.AlignCenter, str(value))
        self._focus_ring(p)
        p.end()

    def sizeHint(self) -> QSize:
        return QSize(520, 92 if self.scale.point_labels else 44)


def make_scale(scale: Scale, parent: QWidget | None = None) -> RatingScale:
    return LikertScale(scale, parent) if scale.is_likert else ContinuousScale(scale, parent)
