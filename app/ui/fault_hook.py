"""A full disk or a read-only study met on the GUI thread outside any handler: a message box.

Qt calls slots from C++; an exception escaping one reaches `sys.excepthook` (PySide prints
it and carries on). The GUI thread writes in many places (ratings, scenes, settings); when
one of those writes fails for a reason the user must fix, the user is told so, instead of
a traceback on a console nobody reads. Every other exception goes to the previous hook.
"""

from __future__ import annotations

import sys
from types import TracebackType

from PySide6.QtWidgets import QWidget

# The window messages go to: the latest one (tests make many windows in one process, and
# the hook is installed once, not wrapped around itself again for each).
_window: QWidget | None = None


def _hook(kind: type[BaseException], exc: BaseException, trace: TracebackType | None) -> None:
    from meaningbench.ui.dialogs.errors import show_error, user_fault

    try:
        context = getattr(_window, "context", None)
        path = getattr(context, "path", None)
    except RuntimeError:  # that window is gone: a box of its own
        context = path = None
    fault = user_fault(exc, path)
    if fault is None:
        _previous(kind, exc, trace)
        return
    show_error(_window if context is not None else None, "Cannot write the study", str(fault))


_previous = sys.excepthook


def install_fault_hook(window: QWidget) -> None:
    global _window, _previous
    _window = window
    if sys.excepthook is not _hook:
        _previous = sys.excepthook
        sys.excepthook = _hook
