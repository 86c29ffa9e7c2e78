"""A second open of a study in the same process keeps the first connection's locks.

On POSIX, closing any descriptor of a file drops every lock the process holds on it. If
opening a study read its header with plain file I/O, a process that opens the study twice
would silently lose the locks of its first connection: another process could then believe
it is alone, checkpoint the write-ahead log and delete it, and the first process's later
commits — each reported as successful — would be lost.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from meaningbench.db.study import copy_study, create_study

ROOT = Path(__file__).resolve().parents[2]

WRITER = r"""
import sys
from sqlalchemy import text
from meaningbench.db.study import open_study

path, ready, go = sys.argv[1], sys.argv[2], sys.argv[3]
first = open_study(path)

def commit(n):
    with first.session() as s:
        s.execute(text("INSERT INTO study_setting (key, value) VALUES (:k, '1')"), {"k": n})

for i in range(20):
    commit(f"before-{i}")
second = open_study(path)  # the same file again, while `first` is live
with first.engine.connect() as conn:  # keep a read transaction open, as the app does
    conn.exec_driver_sql("SELECT COUNT(*) FROM study_setting").fetchone()
    open(ready, "w").close()
    while not __import__("os").path.exists(go):
        __import__("time").sleep(0.01)
for i in range(20):
    commit(f"after-{i}")
print("committed", flush=True)
sys.stdin.read()  # stays alive, connections open, until killed
"""


def _keys(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {k for (k,) in conn.execute("SELECT key FROM study_setting")}
    finally:
        conn.close()


def test_a_second_open_does_not_lose_later_commits(tmp_path: Path) -> None:
    path = tmp_path / "s.mbstudy"
    create_study(path).close()
    ready, go = tmp_path / "ready", tmp_path / "go"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(ready), str(go)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        while not ready.exists():
            assert proc.poll() is None, "the writer died"
            time.sleep(0.01)
        # Another program connects and disconnects: as the last connection it would
        # checkpoint and delete the log if it could not see the writer's lock.
        other = sqlite3.connect(path)
        other.execute("SELECT COUNT(*) FROM study_setting").fetchone()
        other.close()
        assert Path(f"{path}-wal").exists(), "the live writer's log was deleted"
        go.touch()
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "committed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    keys = _keys(path)
    assert {f"before-{i}" for i in range(20)} <= keys
    assert {f"after-{i}" for i in range(20)} <= keys, "commits after the second open were lost"


def test_copy_of_a_live_study_holds_its_log(tmp_path: Path) -> None:
    study = create_study(tmp_path / "live.mbstudy")
    try:
        from sqlalchemy import text

        with study.session() as s:
            s.execute(text("INSERT INTO study_setting (key, value) VALUES ('k', '1')"))
        assert Path(f"{study.path}-wal").exists()  # the row is still in the log
        copy = copy_study(study.path, tmp_path / "copy.mbstudy")
        assert "k" in _keys(copy)
        with study.session() as s:  # the live study goes on working
            s.execute(text("INSERT INTO study_setting (key, value) VALUES ('k2', '1')"))
    finally:
        study.close()
    assert {"k", "k2"} <= _keys(tmp_path / "live.mbstudy")
