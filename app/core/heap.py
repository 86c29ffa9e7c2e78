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
import functools
import platform
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


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
