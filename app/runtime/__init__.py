"""The one way to run work in the background: a job is a function taking a `JobContext`.

The context carries the four things every job needs, whoever runs it:
- progress (`ctx.progress(done, total, message)`), throttled;
- cancel (`ctx.check()` at safe points raises `Cancelled`; `ctx.cancel` is the token);
- log (`ctx.log(line)`: what the job waits for, what it leaves to another process);
- changes (`ctx.changed(changes)`: a `StudyChanges` the job has committed while it runs,
  such as a batch of new scores, so the screens refresh before the job ends);
- messages (`ctx.send(kind, payload)`: other results that arrive while the job runs, such
  as a training's loss events).
The job's return value is its result (a write returns its `StudyChanges`, see
`meaningbench.runtime.changes`); `run_job` turns a call into a `JobResult`. `Job[T]` names
a job whose result is a `T`, so whoever takes the result (a screen's `on_result` handler,
a command's output) is checked against what the job returns.

Who listens decides how it looks: the command line renders the context as a text progress
bar (`meaningbench.jobs.terminal`), the app as a progress widget in the status bar
(`meaningbench.ui.workers`), a child process as messages on a queue. The engine layers
(training, importers, metrics) take the same context, so this module stays free of Qt and
of any heavy import.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from meaningbench.runtime.changes import StudyChanges


class Cancelled(Exception):
    """Raised inside work when its cancel token was set; whatever was committed stays.
    Its message, where given, says what the cancel left instead (an import: nothing)."""


@dataclass(frozen=True)
class Progress:
    done: int
    total: int | None
    message: str = ""
    # The share (0–1) of the job's expected work done, where its items differ in cost
    # (a neural metric's item against a lexical one's); None: `done / total` says it.
    work: float | None = None


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


MessageFn = Callable[[str, Any], None]


@dataclass
class JobContext:
    """Progress, cancel, log and messages of one job (see the module notes)."""

    cancel: CancelToken = field(default_factory=CancelToken)
    report: ProgressFn = no_progress
    # Where log lines go (the terminal prints them on stderr); without a listener they
    # become the progress message, which the app shows beside its progress bar.
    on_notice: Callable[[str], None] | None = None
    # Progress callbacks are throttled so a fast job does not flood a terminal or a GUI.
    min_interval_s: float = 0.05
    # Where `send` delivers; without a listener messages are dropped.
    on_message: MessageFn | None = None
    # Where `changed` delivers (the app's runner broadcasts it to the screens).
    on_changes: Callable[[StudyChanges], None] | None = None
    _last: float = field(default=0.0, repr=False)
    _shown: Progress = field(default=Progress(0, None), repr=False)

    def progress(
        self,
        done: int,
        total: int | None,
        message: str = "",
        *,
        force: bool = False,
        work: float | None = None,
    ) -> None:
        now = time.monotonic()
        if (
            force
            or now - self._last >= self.min_interval_s
            or (total is not None and done >= total)
        ):
            self._last = now
            self._shown = Progress(done, total, message, work)
            self.report(self._shown)

    def log(self, message: str) -> None:
        """A line for the user beside the progress."""
        if self.on_notice is not None:
            self.on_notice(message)
        else:
            self.report(Progress(self._shown.done, self._shown.total, message, self._shown.work))

    notice = log  # the name jobs written before `log` use

    def send(self, kind: str, payload: Any) -> None:
        """A named message to whoever runs the job, delivered while it runs."""
        if self.on_message is not None:
            self.on_message(kind, payload)

    def changed(self, changes: StudyChanges) -> None:
        """Say what the job has committed so far; screens refresh from it while it runs."""
        if self.on_changes is not None and changes:
            self.on_changes(changes)

    def check(self) -> None:
        self.cancel.check()

    @property
    def cancelled(self) -> bool:
        return self.cancel.cancelled


T = TypeVar("T")

# A job whose result is a `T`: `Job[StudyChanges]`, `Job[Wrote[MergeReport]]`.
Job = Callable[[JobContext], T]


@dataclass(frozen=True)
class JobResult(Generic[T]):
    """How a job ended: `done` with its value (a job may return early after a cancel, with
    what it finished), `cancelled` when it stopped at a check, `failed` with the exception."""

    outcome: Literal["done", "cancelled", "failed"]
    value: T | None = None
    error: BaseException | None = None


def run_job(job: Job[T], ctx: JobContext) -> JobResult[T]:
    """Run `job` to its end; a cancel or an exception becomes the result, never a raise."""
    try:
        value = job(ctx)
    except Cancelled:
        return JobResult("cancelled")
    except Exception as exc:
        return JobResult("failed", error=exc)
    return JobResult("done", value)


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
