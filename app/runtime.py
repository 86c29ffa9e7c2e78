"""Cancellation and progress reporting shared by jobs and the engine layers they drive.

Kept free of Qt and of any heavy import so metrics, training and importers can check a
cancel flag and report progress without knowing whether a terminal or a window listens.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


class Cancelled(Exception):
    """Raised inside work when its cancel token was set; whatever was committed stays."""


@dataclass(frozen=True)
class Progress:
    done: int
    total: int | None
    message: str = ""


ProgressFn = Callable[[Progress], None]


def no_progress(_: Progress) -> None:
    return None


class CancelToken:
    """A thread-safe flag; work calls `check()` at safe points (between batches)."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled()

    def wait(self, timeout: float) -> bool:
        """Sleep up to `timeout` seconds, waking at once when cancelled; True if cancelled."""
        return self._event.wait(timeout)


# Progress inside one call of a metric that batches its own inputs (a model sorting a large
# slice by length): (inputs done, inputs in the call). The scoring job listens, so a slice
# of thousands of items still moves the progress bar batch by batch.
_BATCH_PROGRESS: ContextVar[Callable[[int, int], None] | None] = ContextVar(
    "batch_progress", default=None
)


@contextmanager
def batch_progress(listener: Callable[[int, int], None]) -> Iterator[None]:
    """Send the batch progress of the metric calls inside the block to `listener`."""
    token = _BATCH_PROGRESS.set(listener)
    try:
        yield
    finally:
        _BATCH_PROGRESS.reset(token)


def report_batch(done: int, total: int) -> None:
    """Called by a metric's batching loop after each batch; nothing when nobody listens."""
    listener = _BATCH_PROGRESS.get()
    if listener is not None:
        listener(done, total)
