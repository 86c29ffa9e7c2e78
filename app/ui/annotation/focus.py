"""Where a rating screen's keys go when its host focuses the screen itself."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget


def keep_focus_in(chain: Sequence[QWidget]) -> None:
    """Give the first widget of `chain` the keys unless one of them has them already.

    A host that focuses a rating screen (a queue opened or resumed, the page shown again,
    the window activated) means "rate now": digits typed next must reach a scale, not the
    screen, where they would be dropped and every later key would land one place early.
    """
    focused = QApplication.focusWidget()
    if chain and not any(focused is w for w in chain):
        chain[0].setFocus(Qt.FocusReason.OtherFocusReason)
