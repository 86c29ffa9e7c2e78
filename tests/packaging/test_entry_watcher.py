"""The frozen program's Ctrl+C watcher: `meaningbench score` starts a small watcher process
(meaningbench.interrupts), which in the desktop bundle is the bundle's own program, not a
Python interpreter. packaging/entry.py must run the watcher when asked, never the app."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench import interrupts

ENTRY = Path(__file__).resolve().parents[2] / "packaging" / "entry.py"


def test_the_entry_point_runs_the_watcher_and_it_ends_with_its_parent(tmp_path: Path) -> None:
    """Started as the bundle starts it, the watcher waits on its pipe and ends when the
    pipe closes (its parent ended), saying nothing; the command line would have refused
    the flag, and the app would have opened a window."""
    args = ["5", str(os.getpid()), "words"]
    cmd = [sys.executable, str(ENTRY), interrupts.WATCHER_FLAG, *args]
    # An empty input: the pipe closes at once, as when the parent ends.
    done = subprocess.run(cmd, input=b"", capture_output=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    out, err = done.stdout, done.stderr
    assert out == b"" and err == b""


def test_the_watcher_command_names_the_flag_only_when_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = ["5.5", "123", "words"]
    assert interrupts.watcher_command(args)[1:3] == ["-S", "-c"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert interrupts.watcher_command(args) == [sys.executable, interrupts.WATCHER_FLAG, *args]
