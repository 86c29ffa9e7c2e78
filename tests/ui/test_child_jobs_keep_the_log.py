"""A job the app runs in a child process never deletes the study's write-ahead log, even
when the app's SQLite locks were dropped by something outside Python's sight.

The reported failure ("database disk image is malformed" after a sweep, with the app
holding `-wal (deleted)`) takes two things: the app process loses its POSIX locks on the
study (any close of a descriptor of the file does it, from C code too, where no audit hook
sees it), and a child job closing its last connection then takes itself for the study's
last user and deletes the log. The second half is removed at its root: the app's children
work as guests and leave the log to the app.
"""

from __future__ import annotations

import ctypes
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from meaningbench.cli import main
from meaningbench.ops.child_process import in_child_process
from meaningbench.queries.files import open_study
from meaningbench.runtime import JobContext


def read_items(_ctx: Any, path: str) -> int:
    """A child job that opens the study, reads it and closes it, as every job does."""
    from meaningbench.queries.files import open_study as open_in_child

    study = open_in_child(path)
    try:
        with study.session() as s:
            from sqlalchemy import text

            return int(s.execute(text("SELECT COUNT(*) FROM item")).scalar_one())
    finally:
        study.close()


def drop_locks_from_c(path: Path) -> None:
    """What an open and close of the study from C code does to this process's locks."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(os.fsencode(path), os.O_RDONLY)
    assert fd >= 0, ctypes.get_errno()
    libc.close(fd)


def wal_inode(path: Path) -> int | None:
    try:
        return os.stat(f"{path}-wal").st_ino
    except FileNotFoundError:
        return None


@pytest.fixture
def study(tmp_path: Path) -> Path:
    from tests.conftest import FIXTURE_DATASETS

    path = tmp_path / "dev.mbstudy"
    assert main(["import", str(path), str(FIXTURE_DATASETS / "csmd" / "dev.tsv")]) == 0
    return path


def test_a_child_job_leaves_the_log_of_a_study_the_app_holds(study: Path) -> None:
    held = open_study(study)  # the app's study, read once so its connection holds a lock
    try:
        with held.session() as s:
            from sqlalchemy import text

            items = s.execute(text("SELECT COUNT(*) FROM item")).scalar_one()
        before = wal_inode(study)
        assert before is not None

        drop_locks_from_c(study)
        job = in_child_process(read_items, str(study))
        assert job(JobContext()) == items
        assert wal_inode(study) == before, "the child job deleted the log the app holds"

        # The app carries on on the same log, and the study is sound.
        with held.session() as s:
            assert s.execute(text("SELECT COUNT(*) FROM item")).scalar_one() == items
        check = sqlite3.connect(f"{study.resolve().as_uri()}?mode=ro", uri=True)
        try:
            assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            check.close()

        # The same close from a process that is not the app's guest does delete it: the
        # scenario above is the real one.
        code = (
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "c.execute('SELECT COUNT(*) FROM item').fetchone(); c.close()"
        )
        drop_locks_from_c(study)
        subprocess.run([sys.executable, "-c", code, str(study)], check=True, timeout=120)
        assert wal_inode(study) != before
    finally:
        held.close()
