"""Ctrl+C on the command line: the first one stops the command cleanly, a second one at once.

Python turns SIGINT into a KeyboardInterrupt raised wherever the main thread happens to be,
and it can be lost there. Raised inside a weakref callback or a `__del__` (SQLAlchemy drops
sessions and connections after every commit, so these run all the time), Python prints
"Exception ignored" and goes on; raised inside SQLAlchemy's commit, a `finally: assert` turns
it into an AssertionError, which a job takes for a metric's failure. The command then ran on
as if nothing had been pressed: `score` sat in its next batch, and the terminal looked frozen.

So the handler does not rely on the exception alone. The first Ctrl+C sets the cancel token
of every job that runs (`cancelling`), which nothing can lose: jobs check it between
batches. It still raises KeyboardInterrupt, so that a wait ends at once. A command that
promises to stop within a time (`stop_within`) is then ended by a watchdog thread when it
has not ended by itself, and by a watcher process when no Python code can run to do it:
what it committed stays (each batch is its own transaction), and a run it could not close
counts as interrupted once this process is gone. A second Ctrl+C ends the
process at once, exit status 130.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from meaningbench.runtime import CancelToken

EXIT_INTERRUPTED = 130


@dataclass
class _State:
    command: str = "meaningbench"
    pressed_at: float | None = None  # monotonic time of the first Ctrl+C
    limit_s: float | None = None  # the command's promise (stop_within)
    tokens: list[CancelToken] = field(default_factory=list)
    installed: bool = False  # this module's handler handles SIGINT now
    watcher: Any = None  # the watcher process (subprocess.Popen), once started
    wakeup: int = -1  # the write end of its pipe
    # Reentrant: the handler runs on the main thread, possibly while that thread is inside
    # `cancelling` holding the lock; a plain Lock would deadlock there.
    lock: threading.RLock = field(default_factory=threading.RLock)


_STATE = _State()


def _say(text: str) -> None:
    # os.write: a signal handler must not take the locks of sys.stderr's buffer, which the
    # interrupted code may hold (a progress bar writing).
    with suppress(OSError):
        os.write(2, f"\n{_STATE.command}: {text}\n".encode())


def _exit_now(text: str) -> None:
    _say(text)
    os._exit(EXIT_INTERRUPTED)


def _watch(pressed_at: float, limit_s: float) -> None:
    time.sleep(max(0.0, pressed_at + limit_s - time.monotonic()))
    _exit_now(
        f"still stopping after {limit_s:g} s; quit now. Finished work was kept; a run left "
        "open counts as interrupted and resumes next time"
    )


def _start_watchdog() -> None:
    if _STATE.pressed_at is None or _STATE.limit_s is None:
        return
    threading.Thread(
        target=_watch, args=(_STATE.pressed_at, _STATE.limit_s), name="ctrl-c-watch", daemon=True
    ).start()


def _on_sigint(_signum: int, _frame: Any) -> None:
    if _STATE.pressed_at is not None:
        _exit_now("interrupted")
    _STATE.pressed_at = time.monotonic()
    with _STATE.lock:
        tokens = list(_STATE.tokens)
    for token in tokens:
        token.cancel()
    _start_watchdog()
    raise KeyboardInterrupt


@contextmanager
def handled() -> Iterator[None]:
    """Handle SIGINT as above while the block runs (on the main thread; elsewhere as before).

    A SIGINT that the parent process set to be ignored stays ignored, as Python's own
    handler would leave it. A watchdog started by a Ctrl+C outlives the block: the process
    is on its way out, and what is left (exit handlers, threads) must not hang it either.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    ):
        yield
        return
    previous = signal.signal(signal.SIGINT, _on_sigint)
    _STATE.installed = True
    try:
        yield
    finally:
        # After a Ctrl+C the process is on its way out: the handler stays, so a further
        # Ctrl+C still ends it at once, and the watchdogs keep their limit.
        if _STATE.pressed_at is None:
            signal.signal(signal.SIGINT, previous)
            _STATE.installed = False
            _stop_watcher()
            _STATE.command = "meaningbench"
            _STATE.limit_s = None


def leave_if_interrupted(code: int) -> None:
    """After a Ctrl+C, end the process as soon as the command has closed what it writes.

    What Python would still do is its teardown: exit handlers that join worker threads and
    processes, and the destructors of every library loaded (torch's take a second and more
    on a busy machine). None of it keeps the user's work, and all of it counts against the
    promise to stop within seconds.
    """
    if _STATE.pressed_at is None:
        return
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(code)


def name_command(command: str) -> None:
    """The command that messages name."""
    _STATE.command = f"meaningbench {command}"


def interrupted() -> bool:
    """Whether Ctrl+C was pressed (the KeyboardInterrupt itself may have been lost)."""
    return _STATE.pressed_at is not None


@contextmanager
def cancelling(token: CancelToken) -> Iterator[None]:
    """Ctrl+C cancels `token` while the block runs (at once if it was already pressed)."""
    with _STATE.lock:
        _STATE.tokens.append(token)
    if interrupted():
        token.cancel()
    try:
        yield
    finally:
        with _STATE.lock:
            _STATE.tokens.remove(token)


# The watcher process (see `_start_watcher`): reads the signal numbers that Python's C-level
# handler writes to its wakeup fd; after the first SIGINT it waits the limit, after a second
# none, then kills this process, unless it has ended (its end of the pipe closes).
_WATCHER = """
import os, select, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
limit, parent, words = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
deadline, count = None, 0
while os.getppid() == parent:
    wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
    if select.select([0], [], [], wait)[0]:
        data = os.read(0, 64)
        if not data:
            break
        count += data.count(signal.SIGINT)
        if count and deadline is None:
            deadline = time.monotonic() + limit
        if count >= 2:  # the handler ends it at once when it can run: a moment for that
            deadline = min(deadline, time.monotonic() + 0.5)
    if deadline is not None and time.monotonic() >= deadline:
        if os.getppid() == parent:
            os.write(2, ("\\n" + words + "\\n").encode())
            try:
                os.kill(parent, signal.SIGKILL)
            except OSError:
                pass
        break
"""
# The frozen program (the desktop bundle) is not a Python interpreter: `-S -c CODE` would
# start the app itself, with a window, holding the terminal's output open. It runs the
# watcher when asked with this flag instead (packaging/entry.py).
WATCHER_FLAG = "--meaningbench-interrupt-watcher"


def watcher_command(args: list[str]) -> list[str]:
    """The command line of the watcher process, with its arguments (limit, pid, words)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, WATCHER_FLAG, *args]
    return [sys.executable, "-S", "-c", _WATCHER, *args]


def run_watcher(args: list[str]) -> int:
    """The watcher's code in this process (the frozen program's way to start it)."""
    sys.argv = ["watcher", *args]
    exec(compile(_WATCHER, "<interrupt watcher>", "exec"), {"__name__": "__main__"})
    return 0


# How much later than the watchdog thread the watcher process acts: it is for when that
# thread cannot run at all.
WATCHER_MARGIN_S = 0.5


def _start_watcher(limit_s: float) -> None:
    """A watcher outside the interpreter, for when no Python code can run in it.

    Python runs its signal handlers, and its other threads, only between bytecodes: while
    compiled code holds the interpreter (loading torch's libraries takes seconds on a busy
    machine), neither the handler nor the watchdog thread runs. The C-level part of the
    handler still writes the signal's number to the wakeup fd, at once: a small process
    reading that pipe keeps the promise then, ending this one with SIGKILL.
    """
    import subprocess

    if _STATE.watcher is not None:
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        os.close(read_end)
        os.close(write_end)
        return
    words = (
        f"{_STATE.command}: still stopping after {limit_s + WATCHER_MARGIN_S:g} s; killed. "
        "Finished work was kept; a run left open counts as interrupted and resumes next time"
    )
    try:
        _STATE.watcher = subprocess.Popen(
            watcher_command([str(limit_s + WATCHER_MARGIN_S), str(os.getpid()), words]),
            stdin=read_end,
            start_new_session=True,  # the terminal's Ctrl+C is not for it
        )  # fmt: skip
    except OSError:
        signal.set_wakeup_fd(-1)
        os.close(write_end)
    finally:
        os.close(read_end)
    _STATE.wakeup = write_end


def _stop_watcher() -> None:
    if _STATE.watcher is None:
        return
    signal.set_wakeup_fd(-1)
    os.close(_STATE.wakeup)  # the watcher sees the pipe close and ends
    with suppress(Exception):
        _STATE.watcher.wait(timeout=5)
    _STATE.watcher = None


def stop_within(limit_s: float) -> None:
    """This command ends at most `limit_s` seconds after the first Ctrl+C (a second
    Ctrl+C: at once), even while compiled code holds the interpreter (then by SIGKILL,
    `WATCHER_MARGIN_S` later)."""
    _STATE.limit_s = limit_s
    if _STATE.installed:
        _start_watcher(limit_s)
    if interrupted():
        _start_watchdog()
