"""The keys every rating screen reads the same way: undo, back and forth, submit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent

from meaningbench.ui.annotation.scales import NAV_MODIFIERS

K = Qt.Key
Action = Callable[[], None]


class RatingScreen(Protocol):
    def undo_last(self) -> None: ...
    def go_previous(self) -> None: ...
    def go_following(self) -> None: ...
    def submit_current(self) -> None: ...


def shared_action(
    screen: RatingScreen, key: int, mods: Qt.KeyboardModifier
) -> tuple[bool, Action | None]:
    """Ctrl+Z undoes, Alt/Ctrl+←/→ go back and forth, Enter submits; any other Alt/Ctrl
    chord does nothing (a scale must not read it as a digit). (True, the action or None)
    for these keys; (False, None) for a key the screen reads itself."""
    nav = bool(mods & NAV_MODIFIERS)
    if mods & Qt.KeyboardModifier.ControlModifier and key == K.Key_Z:
        return True, screen.undo_last
    if nav and key == K.Key_Left:
        return True, screen.go_previous
    if nav and key == K.Key_Right:
        return True, screen.go_following
    if nav:
        return True, None
    if key in (K.Key_Return, K.Key_Enter):
        return True, screen.submit_current
    return False, None


def run_key_action(action: Action | None, event: QKeyEvent) -> bool:
    """Run the key's action, if it has one, and take the event; True when it did."""
    if action is None:
        return False
    action()
    event.accept()
    return True
