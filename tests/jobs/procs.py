"""Real `meaningbench` processes for the concurrency tests, and what /proc says about them.

Commands run as subprocesses of this interpreter. A test metric module is imported first
where a test needs one (importing it registers the metric in that process only); stderr is
read on a thread so a test can wait for a line with a deadline.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = (
    "import importlib, sys\n"
    "for name in filter(None, sys.argv[1].split(',')):\n"
    "    importlib.import_module(name)\n"
    "from meaningbench.cli import main\n"
    "raise SystemExit(main(sys.argv[2:]))\n"
)


class Command:
    """A running `meaningbench` command whose stderr lines can be waited for."""

    def __init__(
        self, args: Sequence[str], *, modules: Sequence[str] = (), env: dict[str, str] | None = None
    ) -> None:
        argv = (
            [sys.executable, "-c", PROGRAM, ",".join(modules), *args]
            if modules
            else [sys.executable, "-m", "meaningbench.cli", *args]
        )
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: what it leaves behind is findable
        )
        self.pid = self.proc.pid
        self.err_lines: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for_line(self, text: str, timeout: float = 60.0) -> str:
        """The first stderr line containing `text`; fails when the process ends first."""
        for line in self.err_lines:
            if text in line:
                return line
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} on stderr within {timeout} s: {self.err_lines}"
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            assert line is not None, f"ended ({self.proc.wait()}) before {text!r}: {self.err_lines}"
            self.err_lines.append(line)
            if text in line:
                return line

    def finish(self, timeout: float = 180.0) -> tuple[int, str, str]:
        """Wait for the end; (exit code, stdout, all of stderr)."""
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.err_lines.append(line)
        return code, out, "".join(self.err_lines)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll a condition until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def query(path: Path, sql: str, params: Sequence[object] = ()) -> list[tuple]:
    """Rows from the study through a short-lived read-only connection."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


# ---- /proc --------------------------------------------------------------------------------

ProcKey = tuple[int, int]  # pid, start time in clock ticks: a reused pid is another process


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def processes() -> dict[ProcKey, tuple[int, int, str]]:
    """Every live process: (pid, start) -> (ppid, pgid, state)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None:
            continue
        out[(int(entry.name), int(fields[19]))] = (int(fields[1]), int(fields[2]), fields[0])
    return out


def children(pid: int) -> set[ProcKey]:
    return {key for key, (ppid, _, _) in processes().items() if ppid == pid}


def running(keys: set[ProcKey]) -> set[ProcKey]:
    """Those of `keys` still running (zombies waiting to be reaped count as gone)."""
    live = processes()
    return {key for key in keys if key in live and live[key][2] != "Z"}


def in_group(pgid: int) -> set[ProcKey]:
    return {key for key, (_, group, state) in processes().items() if group == pgid and state != "Z"}
