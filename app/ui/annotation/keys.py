"""The keys every rating screen reads the same way: undo, back and forth, submit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent

from meaningbench.ui.annotation.scales import CHORD_MODIFIERS, NAV_MODIFIERS, held, typed_digit

K = Qt.Key
Action = Callable[[], object]  # what a key's action returns is not read


class KeyTarget(Protocol):
    def undo_last(self) -> None: ...
    def go_previous(self) -> None: ...
    def go_following(self) -> None: ...
    def submit_current(self) -> object: ...


class DigitScale(Protocol):
    def is_set(self) -> bool: ...
    def setFocus(self, reason: Qt.FocusReason) -> None: ...  # noqa: N802 - Qt's name
    def type_digit(self, digit: int) -> bool: ...


def shared_action(
    screen: KeyTarget, key: int, mods: Qt.KeyboardModifier, repeat: bool = False
) -> tuple[bool, Action | None]:
    """Ctrl+Z undoes, Alt/Ctrl+←/→ go back and forth, Enter submits; any other Alt, Ctrl or
    Meta chord does nothing (a scale must not read it as a digit). (True, the action or None)
    for these keys; (False, None) for a key the screen reads itself. `repeat`: the key is
    held down (its auto-repeat), which submits nothing: see `held`."""
    nav = bool(mods & NAV_MODIFIERS)
    if mods & Qt.KeyboardModifier.ControlModifier and key == K.Key_Z:
        return True, screen.undo_last
    if nav and key == K.Key_Left:
        return True, screen.go_previous
    if nav and key == K.Key_Right:
        return True, screen.go_following
    if mods & CHORD_MODIFIERS:
        return True, None
    if key in (K.Key_Return, K.Key_Enter):
        return True, None if repeat else screen.submit_current
    return False, None


def run_key_action(action: Action | None, event: QKeyEvent) -> bool:
    """Run the key's action, if it has one, and take the event; True when it did."""
    if action is None:
        return False
    action()
    event.accept()
    return True


def claim_keys(event: QEvent, claims: Callable[[QKeyEvent], bool]) -> bool:
    """Take the shortcut check of a key the screen `claims`, so that no shortcut of the
    window acts on it first; True when it did."""
    if (
        event.type() == QEvent.Type.ShortcutOverride
        and isinstance(event, QKeyEvent)
        and claims(event)
    ):
        event.accept()
        return True
    return False


def type_into_scales(scales: Sequence[DigitScale], event: QKeyEvent) -> bool:
    """A digit typed while the screen itself has focus (after a click on a text) goes to
    the first scale not yet set, else to the first scale; False for a key that types no
    digit (Ctrl+3 and the like), which is left alone."""
    digit = typed_digit(event)
    if digit is None or not scales:
        return False
    if held(event):
        event.accept()
        return True
    target = next((sc for sc in scales if not sc.is_set()), scales[0])
    target.setFocus(Qt.FocusReason.OtherFocusReason)
    target.type_digit(digit)
    event.accept()
    return True
