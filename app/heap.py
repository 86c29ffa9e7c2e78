"""Giving freed heap memory back to the operating system during long runs.

A streaming run keeps a bounded set of cached embeddings alive while model activations of
every size come and go around them. glibc's allocator then leaves the freed pages between
long-lived blocks resident: the bytes in use stay flat, yet the resident size creeps up by
hundreds of megabytes over tens of thousands of items. `malloc_trim` returns those pages
(it releases whole free pages anywhere in the heap, not only at its top). Elsewhere —
macOS, Windows, musl — the call does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
from collections.abc import Callable

_trim: Callable[[int], int] | None = None
_looked_up = False


def _malloc_trim() -> Callable[[int], int] | None:
    global _trim, _looked_up
    if not _looked_up:
        _looked_up = True
        if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                fn = libc.malloc_trim
                fn.argtypes = [ctypes.c_size_t]
                fn.restype = ctypes.c_int
                _trim = fn
            except (OSError, AttributeError):
                _trim = None
    return _trim


def trim_available() -> bool:
    """Whether this process's allocator can be asked to give memory back."""
    return _malloc_trim() is not None


def trim_heap() -> bool:
    """Return free heap pages to the system; True when the allocator supports it."""
    fn = _malloc_trim()
    if fn is None:
        return False
    fn(0)
    return True
