"""Run a job in a child process, relaying its progress, messages, result and errors.

Why a process and not only a thread: CPU-bound Python work on a thread of the GUI process
competes with the GUI thread for the GIL, and its garbage collections (a full collection
of a heap holding pandas, SQLAlchemy and the metric libraries takes a third of a second)
stop every thread. Measured on the battery, that froze the window for up to 0.8 s. In a
child process the window's thread only waits on a queue. The child is started with
"spawn" (no fork of a threaded Qt process) and imports only what the job needs: no Qt.

The job is `target(ctx, *args)`, a module-level function (it is pickled by name), and
`ctx` a `JobContext` whose progress, log lines, changes (`ctx.changed(...)`: the battery's
batches of new scores) and messages cross back on a queue to the parent's context.
This module is Qt-free so that the child never loads Qt.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue as queue_module
import threading
import time
import traceback
from collections.abc import Callable
from functools import partial
from typing import Any, Concatenate, ParamSpec, TypeVar

from meaningbench.errors import UserError
from meaningbench.runtime import Cancelled, CancelToken, Job, JobContext, Progress, run_job

P = ParamSpec("P")
T = TypeVar("T")

POLL_S = 0.1
# Unix niceness of the child: on a busy machine the window's thread is scheduled first.
CHILD_NICENESS = 10
# After a cancel the job stops at its next batch; past this, the process is ended.
CANCEL_GRACE_S = 60.0


class ChildUserError(UserError):
    """A user error raised in the child (bad input, a missing study): its message is kept."""


class ChildJobError(RuntimeError):
    """A bug in the child; `child_trace` is its traceback, for the error dialog's details."""

    def __init__(self, message: str, child_trace: str) -> None:
        super().__init__(message)
        self.child_trace = child_trace


class _ChildCancel(CancelToken):
    """Cancelled when the parent sets the shared event, or when the parent is gone."""

    def __init__(self, event: Any, parent_pid: int) -> None:
        super().__init__()
        self._event = event
        self._parent_pid = parent_pid

    @property
    def cancelled(self) -> bool:
        return bool(self._event.is_set()) or os.getppid() != self._parent_pid

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled()


def _is_user_error(exc: BaseException) -> bool:
    from meaningbench.queries.files import is_user_error

    return is_user_error(exc)


def _lower_priority() -> None:
    """Background work yields the CPU to the window (its worker processes inherit this)."""
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(CHILD_NICENESS)


def _child_main(
    target: Callable[..., Any], args: tuple[Any, ...], out: Any, stop: Any, parent_pid: int
) -> None:
    from meaningbench.queries.files import work_as_guest

    _lower_priority()
    # The app holds the study open: this job must never delete the study's log on its way
    # out, whatever the state of the app's locks.
    work_as_guest()

    def report(p: Progress) -> None:
        out.put(("progress", p.done, p.total, p.message, p.work))

    ctx = JobContext(
        cancel=_ChildCancel(stop, parent_pid),
        report=report,
        on_notice=lambda line: out.put(("log", line)),
        on_message=lambda kind, payload: out.put(("send", kind, payload)),
        on_changes=lambda changes: out.put(("changes", changes)),
    )
    try:
        ended = run_job(lambda c: target(c, *args), ctx)
        if ended.outcome == "failed" and ended.error is not None:
            exc = ended.error
            out.put(("error", _is_user_error(exc), str(exc) or type(exc).__name__,
                     "".join(traceback.format_exception(exc))))  # fmt: skip
        elif ended.outcome == "cancelled":
            out.put(("cancelled",))
        else:
            out.put(("result", ended.value))
    finally:
        out.close()
        out.join_thread()


_LIVE: set[Any] = set()  # child processes running now (for terminate_all)
_LIVE_LOCK = threading.Lock()


def terminate_all() -> int:
    """End every running child job at once (the window is closing and cannot wait)."""
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.terminate()
    return len(procs)


def in_child_process(
    target: Callable[Concatenate[JobContext, P], T], *args: P.args, **kwargs: P.kwargs
) -> Job[T]:
    """A job (for JobRunner.start) that runs `target(ctx, *args, **kwargs)` in a child
    process; its result is the target's, so a screen's handler is checked against it."""
    # Keywords travel bound to the target: a partial of a module-level function pickles.
    work = partial(target, **kwargs) if kwargs else target
    return partial(_pump, work, args)


def _pump(target: Callable[..., Any], args: tuple[Any, ...], ctx: JobContext) -> Any:
    mp = multiprocessing.get_context("spawn")
    out = mp.Queue()
    stop = mp.Event()
    # Not a daemon: the scoring job starts its own pool of worker processes.
    proc = mp.Process(
        target=_child_main, args=(target, args, out, stop, os.getpid()), name="meaningbench-job"
    )
    proc.start()
    with _LIVE_LOCK:
        _LIVE.add(proc)
    cancel_sent: float | None = None
    outcome: tuple[Any, ...] | None = None
    try:
        while outcome is None:
            if ctx.cancel.cancelled and cancel_sent is None:
                stop.set()
                cancel_sent = time.monotonic()
            try:
                msg = out.get(timeout=POLL_S)
            except queue_module.Empty:
                if not proc.is_alive():
                    outcome = _drain(out, ctx)
                    break
                if cancel_sent is not None and time.monotonic() - cancel_sent > CANCEL_GRACE_S:
                    proc.terminate()
                    raise Cancelled() from None
                continue
            outcome = _handle(msg, ctx)
    finally:
        if outcome is None and proc.is_alive():  # the thread itself failed: stop the child
            stop.set()
        proc.join(timeout=CANCEL_GRACE_S)
        if proc.is_alive():
            proc.terminate()
            proc.join()
        with _LIVE_LOCK:
            _LIVE.discard(proc)
    if outcome is None:
        raise ChildJobError(
            f"the job's process stopped unexpectedly (exit code {proc.exitcode})", ""
        )
    kind = outcome[0]
    if kind == "result":
        return outcome[1]
    if kind == "cancelled":
        raise Cancelled()
    _, is_user, message, trace = outcome
    if is_user:
        raise ChildUserError(message)
    raise ChildJobError(message, trace)


def _handle(msg: tuple[Any, ...], ctx: JobContext) -> Any:
    kind = msg[0]
    if kind == "progress":
        ctx.progress(msg[1], msg[2], msg[3], force=True, work=msg[4])  # the child throttles
        return None
    if kind == "log":
        ctx.log(msg[1])
        return None
    if kind == "send":
        ctx.send(msg[1], msg[2])
        return None
    if kind == "changes":
        ctx.changed(msg[1])
        return None
    return msg  # result | cancelled | error: the last message


def _drain(out: Any, ctx: JobContext) -> Any:
    """Messages still queued when the child exited; the outcome if one is among them."""
    while True:
        try:
            msg = out.get(timeout=POLL_S)
        except queue_module.Empty:
            return None
        outcome = _handle(msg, ctx)
        if outcome is not None:
            return outcome
