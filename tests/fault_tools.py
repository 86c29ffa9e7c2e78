"""Real faults for real processes: a file size limit, a read-only study, a full or read-only
disk, each applied to a `meaningbench` command started as a process of its own.

- Full disk: RLIMIT_FSIZE in the child (SIGXFSZ ignored), so its writes past the limit fail
  with EFBIG, an operating-system write failure like ENOSPC that needs no privileges.
  Where mounting is allowed (root in a private mount namespace), a small tmpfs gives a
  genuine ENOSPC as well.
- Read-only: file and folder modes. Root ignores them, so a child of root drops
  CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its bounding set before it starts (CI runs
  as root); the kernel then applies the modes to it as to anyone. A read-only bind mount in
  a private mount namespace gives a read-only medium (EROFS) where that is allowed.
"""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2


def env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",  # a size limit must not meet a .pyc being written
        "QT_QPA_PLATFORM": "offscreen",
    }


def file_size_limit(n_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, (n_bytes, n_bytes))

    return apply


def _drop_dac_capabilities() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _can_drop_capabilities() -> bool:
    probe = subprocess.run(
        ["sh", "-c", "grep CapEff /proc/self/status"],
        preexec_fn=_drop_dac_capabilities,
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return False
    eff = int(probe.stdout.split()[-1], 16)
    return not eff & (1 << CAP_DAC_OVERRIDE | 1 << CAP_DAC_READ_SEARCH)


def unprivileged() -> Callable[[], None] | None:
    """What a child needs to meet file modes as any user does (None: nothing to do)."""
    if os.geteuid() != 0:
        return None
    try:
        if _can_drop_capabilities():
            return _drop_dac_capabilities
    except (OSError, subprocess.SubprocessError):
        pass
    pytest.skip("running as root and cannot drop CAP_DAC_OVERRIDE here")


def cli(
    *args: str | Path,
    preexec: Callable[[], None] | None = None,
    wrap: Sequence[str] = (),
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`meaningbench ARGS` as a process of its own (`python -m meaningbench.cli`)."""
    return subprocess.run(
        [*wrap, sys.executable, "-m", "meaningbench.cli", *map(str, args)],
        preexec_fn=preexec,
        env=env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_line_error(done: subprocess.CompletedProcess[str], *phrases: str) -> str:
    """Exit 2, no traceback, one error line holding every phrase; returns that line."""
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    errors = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1, done.stderr  # beside it only progress lines or a note
    for phrase in phrases:
        assert phrase in errors[0], errors[0]
    return errors[0]


def write_pairs(path: Path, rows: int, *, tag: str = "Source") -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("source,output,annotator,meaning\n")
        for i in range(rows):
            fh.write(
                f"{tag} sentence number {i} is long enough to fill a page.,"
                f"Output {i} of it.,r{i % 5},{i % 101}\n"
            )
    return path


def study_state(path: Path) -> tuple[str, int, int, str]:
    """(integrity check, items, ratings, schema) read through SQLite.

    A read-write connection (`mode=rw`: never creating the file), as no other process
    uses the study now: a read-only one would leave its `-wal` and `-shm` behind.
    """
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    try:
        return (
            conn.execute("PRAGMA integrity_check").fetchone()[0],
            conn.execute("SELECT count(*) FROM item").fetchone()[0],
            conn.execute("SELECT count(*) FROM rating").fetchone()[0],
            conn.execute("SELECT version_num FROM alembic_version").fetchone()[0],
        )
    finally:
        conn.close()


def files_in(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def private_mount_namespace() -> list[str]:
    """A command prefix running its command in a mount namespace of its own; skips where
    mounting is not allowed (a container without the privilege, a non-root user)."""
    unshare = shutil.which("unshare")
    if unshare is None or sys.platform != "linux":
        pytest.skip("no unshare here")
    probe = subprocess.run(
        [unshare, "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt && umount /mnt"],
        capture_output=True,
    )
    if probe.returncode != 0:
        pytest.skip("mounting is not allowed here")
    return [unshare, "-m"]


def make_old_study(path: Path, *, dangling: bool = False) -> Path:
    """A study at schema 0002 with one item and rating; `dangling`: the rating points at
    an annotator that does not exist (as an outside tool could leave it), which makes the
    upgrade to 0003 fail its reference check."""
    from alembic import command

    from meaningbench.db.engine import make_engine
    from meaningbench.db.study import alembic_config

    engine = make_engine(path)
    command.upgrade(alembic_config(engine), "0002")
    engine.dispose()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.executescript(
        f"""
        BEGIN;
        INSERT INTO dataset (name, imported_at, meta) VALUES ('old', '2026-01-01', '{{}}');
        INSERT INTO item (dataset_id, source, output, refs, source_group, pair_key, kind, meta)
            VALUES (1, 'A cat sat.', 'Cat sat.', '[]', 'g1', 'k1', 'regular', '{{}}');
        INSERT INTO annotator (name, kind, created_at, meta)
            VALUES ('r1', 'human', '2026-01-01', '{{}}');
        INSERT INTO dimension (name, scale, min_value, max_value, label_low, label_high,
            question, position, active) VALUES ('meaning', 'continuous', 0, 100, 'l', 'h',
            'q', 0, 1);
        INSERT INTO rating (item_id, annotator_id, dimension_id, value, shown_at,
            submitted_at, flagged, state, origin, n_raters)
            VALUES (1, {999 if dangling else 1}, 1, 50, '2026-01-01', '2026-01-01', 0,
            'current', 'import:x.csv', 1);
        COMMIT;
        """
    )
    conn.close()
    return path


def file_digest(path: Path) -> str:
    """The bytes of a study no process has open (never call it beside a live connection)."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
