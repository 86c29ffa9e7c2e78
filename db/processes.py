"""Which process owns a piece of work in a study, and whether that process still lives.

A study records the process that scores a metric run or holds the write lock for a long
transaction: its pid, its host and its start time. A pid alone is not enough: after a kill
and a reboot (or simply many processes later) the same pid can belong to an unrelated
program, which must not be mistaken for the owner. The start time tells them apart.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# Start times are clock ticks (1/100 s) since boot; they compare equal for one process.
_START_TOLERANCE_S = 0.005


@dataclass(frozen=True)
class ProcessId:
    """A process as a study records it. `started` (seconds since boot) is None where it
    cannot be read."""

    pid: int
    host: str
    started: float | None

    def describe(self) -> str:
        here = "" if self.host == this_host() else f" on {self.host}"
        return f"pid {self.pid}{here}"


@cache
def this_host() -> str:
    return socket.gethostname()


def start_time(pid: int) -> float | None:
    """When a process started, in seconds since boot, from /proc; None where unknown.

    Not the wall-clock time: the boot time the kernel reports moves when the clock is set,
    and a live owner must never look like another process.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        ticks = int(fields[19])  # field 22, starttime, in clock ticks since boot
    except (IndexError, ValueError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def this_process() -> ProcessId:
    pid = os.getpid()
    return ProcessId(pid, this_host(), start_time(pid))


def _pid_exists(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def is_alive(owner: ProcessId) -> bool:
    """Whether the recorded process still runs. A process on another host cannot be
    checked from here and counts as alive."""
    if owner.host != this_host():
        return True
    if not _pid_exists(owner.pid):
        return False
    if owner.started is None:
        return True
    now = start_time(owner.pid)
    if now is None:  # no /proc: the pid exists, trust it
        return True
    # A zombie still has its pid and start time until reaped, but it scores nothing more.
    return abs(now - owner.started) <= _START_TOLERANCE_S and not _is_zombie(owner.pid)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].startswith("Z")
