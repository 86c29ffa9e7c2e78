"""The app's one way to run background work: jobs (`job(ctx: JobContext)`) on worker
threads, with their progress, log, messages, result and error as signals on the GUI thread.

Every screen starts its work here (`JobRunner.start`, or `JobRunner.run_now` for a write
a keystroke makes, such as a rating), and the status bar's job panel lists whatever runs
and cancels it. Heavy jobs (the battery, imports, exports) go one step further and run in
a child process (`meaningbench.ops.child_process.in_child_process`); the worker thread
then only relays.

What a write changed (`StudyChanges`: what it told with `ctx.changed` while it ran, then
whatever its result says besides) is broadcast once, on `JobRunner.study_changed`; every
screen listens there and decides what to refresh. No screen tells another.

The job itself stays Qt-free (it is the same function the CLI runs with a terminal bar,
`meaningbench.runtime` describes the idiom); this module only carries what it reports back
to the GUI thread. A job opens its own study: nothing database-bound crosses threads here.

How the hop between threads works: the worker thread emits the signals of a `_Bridge`
that lives in the GUI thread; the handle's slots are bound methods of a QObject living in
the GUI thread, so Qt queues the calls into the GUI thread's event loop.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot
from PySide6.QtWidgets import QWidget

from meaningbench.errors import UserError
from meaningbench.runtime import Job, JobContext, JobResult, Progress, run_job
from meaningbench.runtime.changes import EMPTY, StudyChanges, Wrote, changes_of

T = TypeVar("T")


@dataclass(frozen=True)
class JobFailure:
    """What a failed job left behind: the exception, its traceback, and whether it is the user's."""

    title: str
    exception: BaseException
    trace: str

    @property
    def is_user_error(self) -> bool:
        from meaningbench.queries.files import is_user_error

        if is_user_error(self.exception):
            return True
        return self._fault() is not None

    def _fault(self) -> Exception | None:
        # A full disk or a read-only medium is the user's to fix, not a bug to report.
        from meaningbench.queries.files import describe_fault

        return describe_fault(self.exception)

    @property
    def message(self) -> str:
        fault = None if isinstance(self.exception, UserError) else self._fault()
        text = str(fault if fault is not None else self.exception).strip()
        return text or type(self.exception).__name__


class _Bridge(QObject):
    progress = Signal(object)
    log = Signal(str)
    message = Signal(str, object)
    changes = Signal(object)
    result = Signal(object)
    failed = Signal(object)
    cancelled = Signal()
    done = Signal()


class _Runnable(QRunnable):
    def __init__(self, job: Job[object], ctx: JobContext, bridge: _Bridge, title: str) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._job = job
        self._ctx = ctx
        self._bridge = bridge
        self._title = title

    def run(self) -> None:
        bridge = self._bridge
        try:
            ended = run_job(self._job, self._ctx)
        except BaseException as exc:  # not an Exception (SystemExit): still never a crash
            ended = JobResult("failed", error=exc)
        try:
            if ended.outcome == "cancelled":
                bridge.cancelled.emit()
            elif ended.error is not None:  # reaches the GUI as a dialog, never a crash
                error = ended.error
                # A job run in a child process brings the child's traceback along.
                trace = getattr(error, "child_trace", "") or "".join(
                    traceback.format_exception(error)
                )
                bridge.failed.emit(JobFailure(self._title, error, trace))
            else:
                if self._ctx.cancelled:  # it returned what it finished before the cancel
                    bridge.cancelled.emit()
                bridge.result.emit(ended.value)
        finally:
            bridge.done.emit()


def cancel_job(handle: JobHandle | None) -> None:
    """What a view's Cancel button does: cancel its job, if it has one."""
    if handle is not None:
        handle.cancel()


class JobHandle(QObject):
    """One running job as the GUI sees it. Every signal arrives on the GUI thread."""

    progress = Signal(object)  # meaningbench.runtime.Progress
    log = Signal(str)  # a line the job wrote with ctx.log(line)
    message = Signal(str, object)  # what the job sent with ctx.send(kind, payload)
    # What the job changed (StudyChanges), each change once: told mid-run, then the rest.
    changed = Signal(object)
    result = Signal(object)  # the job's value (a write's `Wrote` arrives unwrapped)
    failed = Signal(object)  # JobFailure
    cancelled = Signal()
    # Someone asked the job to stop (its own screen or the status bar's job panel).
    cancelling = Signal()
    finished = Signal()

    def __init__(self, title: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.last_progress: Progress | None = None
        self.log_lines: list[str] = []
        self.running = True
        self.outcome: str = "running"  # running | done | failed | cancelled
        self.value: Any = None
        self.failure: JobFailure | None = None
        self.changes: StudyChanges = EMPTY  # everything broadcast for this job so far
        self._bridge = _Bridge(self)
        self._bridge.progress.connect(self._on_progress)
        self._bridge.log.connect(self._on_log)
        self._bridge.message.connect(self.message)
        self._bridge.changes.connect(self._on_changes)
        self._bridge.result.connect(self._on_result)
        self._bridge.failed.connect(self._on_failed)
        self._bridge.cancelled.connect(self._on_cancelled)
        self._bridge.done.connect(self._on_done)
        self.ctx = JobContext(
            report=self._bridge.progress.emit,
            on_notice=self._bridge.log.emit,
            on_message=self._bridge.message.emit,
            on_changes=self._bridge.changes.emit,
        )

    def cancel(self) -> None:
        """Ask the job to stop at its next check; what it committed stays. The one cancel:
        every button that stops a job calls this, and every view of the job hears
        `cancelling`, wherever the cancel came from."""
        if not self.running or self.ctx.cancelled:
            return
        self.ctx.cancel.cancel()
        self.cancelling.emit()

    @Slot(object)
    def _on_progress(self, p: Progress) -> None:
        self.last_progress = p
        self.progress.emit(p)

    @Slot(str)
    def _on_log(self, line: str) -> None:
        self.log_lines.append(line)
        self.log.emit(line)

    @Slot(object)
    def _on_changes(self, changes: StudyChanges) -> None:
        """Broadcast what is new in `changes` (a job's result repeats what it told)."""
        fresh = changes - self.changes
        if fresh:
            self.changes |= fresh
            self.changed.emit(fresh)

    @Slot(object)
    def _on_result(self, value: Any) -> None:
        self._on_changes(changes_of(value))
        if isinstance(value, Wrote):
            value = value.value
        self.value = value
        if self.outcome == "running":
            self.outcome = "done"
        self.result.emit(value)

    @Slot(object)
    def _on_failed(self, failure: JobFailure) -> None:
        self.failure = failure
        self.outcome = "failed"
        self.failed.emit(failure)

    @Slot()
    def _on_cancelled(self) -> None:
        self.outcome = "cancelled"
        self.cancelled.emit()

    @Slot()
    def _on_done(self) -> None:
        self.running = False
        self.finished.emit()


class JobRunner(QObject):
    """Starts jobs on its own thread pool and tells the window which ones are running.

    A failed job shows an error dialog (parented to `dialog_parent`) unless the caller asked
    to handle errors itself; either way the application goes on.
    """

    job_started = Signal(object)  # JobHandle
    job_finished = Signal(object)  # JobHandle
    # The one broadcast of what a write changed (StudyChanges); the StudyContext relays it.
    study_changed = Signal(object)

    def __init__(self, parent: QObject | None = None, *, max_threads: int = 2) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._handles: list[JobHandle] = []
        self.dialog_parent: QWidget | None = None
        self.show_error_dialogs = True

    @property
    def active(self) -> list[JobHandle]:
        return list(self._handles)

    # A write's `Wrote(value, changes)` reaches `on_result` (and `run_now`'s caller) as its
    # value, so the handler is checked against the value; any other result as it is.
    @overload
    def start(
        self,
        job: Job[Wrote[T]],
        *,
        title: str,
        on_result: Callable[[T], None] | None = None,
        on_failed: Callable[[JobFailure], None] | None = None,
        show_errors: bool = True,
    ) -> JobHandle: ...

    @overload
    def start(
        self,
        job: Job[T],
        *,
        title: str,
        on_result: Callable[[T], None] | None = None,
        on_failed: Callable[[JobFailure], None] | None = None,
        show_errors: bool = True,
    ) -> JobHandle: ...

    def start(
        self,
        job: Job[Any],
        *,
        title: str,
        on_result: Callable[[Any], None] | None = None,
        on_failed: Callable[[JobFailure], None] | None = None,
        show_errors: bool = True,
    ) -> JobHandle:
        handle = JobHandle(title, self)
        if on_result is not None:
            handle.result.connect(on_result)
        if on_failed is not None:
            handle.failed.connect(on_failed)
        if show_errors:
            handle.failed.connect(self._show_failure)
        handle.changed.connect(self.study_changed)
        handle.finished.connect(lambda: self._retire(handle))
        self._handles.append(handle)
        self._pool.start(_Runnable(job, handle.ctx, handle._bridge, title))
        self.job_started.emit(handle)
        return handle

    @overload
    def run_now(self, job: Job[Wrote[T]]) -> T: ...

    @overload
    def run_now(self, job: Job[T]) -> T: ...

    def run_now(self, job: Job[Any]) -> Any:
        """Run a fast write here, on the GUI thread (a rating: instant, keyboard-first), and
        broadcast what it changed like any job's. Its exceptions reach the caller."""
        value = job(JobContext())
        self.broadcast(changes_of(value))
        return value.value if isinstance(value, Wrote) else value

    def broadcast(self, changes: StudyChanges) -> None:
        """Tell every screen what a write changed (nothing when it changed nothing)."""
        if changes:
            self.study_changed.emit(changes)

    def cancel_all(self) -> None:
        for handle in self._handles:
            handle.cancel()

    def wait(self, msecs: int = -1) -> bool:
        """Block until every job has stopped (used when the window closes)."""
        return bool(self._pool.waitForDone(msecs))

    def _retire(self, handle: JobHandle) -> None:
        if handle in self._handles:
            self._handles.remove(handle)
        # The handle stays a child of the runner: callers may still read its outcome.
        self.job_finished.emit(handle)

    def _show_failure(self, failure: JobFailure) -> None:
        if not self.show_error_dialogs:
            return
        from meaningbench.ui.dialogs.errors import show_failure

        show_failure(self.dialog_parent, failure)
