"""Everything that imports PySide6 or pyqtgraph, and nothing else does.

Importing this package first guards against a reference-counting fault of PySide6 6.12.0
on Python 3.11: its bindings return the `None`, `True` and `False` singletons without
taking a reference to them (every void method such as `QLabel.setText`, and every
`Signal.emit`, drops one reference). CPython 3.11 still counts references on those
singletons, so after a few thousand calls (a minute of a progress bar) the interpreter
aborts with "Fatal Python error: none_dealloc" (or bool_dealloc). The guard detects the
fault with two probe calls and, only then, gives the singletons a reference count no
program can exhaust, which is what CPython 3.12 does for them anyway (PEP 683, immortal
objects). PySide6 6.11 and earlier do not have the fault.
"""

from __future__ import annotations

import sys

_SINGLETONS = (None, True, False, NotImplemented, Ellipsis)


def _refs() -> int:
    return sum(sys.getrefcount(obj) for obj in _SINGLETONS)


def bindings_leak_singleton_references() -> bool:
    """Whether this PySide6 loses a reference of None/True/False per call into Qt."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    probe = _Probe()
    before = _refs()
    probe.setObjectName("probe")  # a void method: returns None
    probe.ping.emit()  # returns a bool
    after = _refs()
    return after < before


def _guard_singleton_refcounts() -> None:
    if sys.version_info >= (3, 12) or not bindings_leak_singleton_references():
        return  # immortal singletons, or bindings without the fault
    import ctypes

    for singleton in _SINGLETONS:
        ctypes.c_ssize_t.from_address(id(singleton)).value += 1 << 40


_guard_singleton_refcounts()
