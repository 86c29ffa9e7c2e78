"""A small thread pool for the heavy array work of the analysis (sorts, Kendall, bootstrap).

numpy's sorts, scipy's Kendall counter and BLAS release the GIL, so threads give real
parallelism without pickling the data for processes. BLAS is held to one thread inside
the pool: several BLAS thread teams on a busy machine spin against each other and can be
ten times slower than one thread per task.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_WORKERS = 4
_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_inside = threading.local()


def n_workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cpus))


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=n_workers(), thread_name_prefix="analysis")
        return _pool


_controller: Any = None


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    # One controller for the process: making one scans every loaded library (milliseconds,
    # and thread_map enters here once per call); numpy and scipy load their BLAS on import.
    global _controller
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # without threadpoolctl BLAS keeps its own threads
        yield
        return
    with _lock:
        if _controller is None:
            _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield


def _run_marked(fn: Callable[[T], R], item: T) -> R:
    _inside.flag = True
    try:
        return fn(item)
    finally:
        _inside.flag = False


def thread_map(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """`[fn(i) for i in items]`, on the pool when there is more than one task and core.

    A task that itself calls thread_map runs its tasks inline (no pool deadlock).
    """
    if len(items) <= 1 or n_workers() == 1 or getattr(_inside, "flag", False):
        return [fn(i) for i in items]
    pool = _get_pool()
    with single_threaded_blas():
        return list(pool.map(lambda i: _run_marked(fn, i), items))
