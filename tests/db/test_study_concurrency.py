"""The study file shared by processes: who owns a run, who holds the write lock, and how a
write waits for it; migration 0004 (run owners, interrupted runs)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from meaningbench.db.engine import WaitPolicy, make_engine
from meaningbench.db.processes import ProcessId, is_alive, this_process
from meaningbench.db.runs import interrupt_gone_runs
from meaningbench.db.study import SCHEMA_HEAD, alembic_config, create_study, open_study
from meaningbench.db.writers import current_writer, writer_file

ROOT = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

HOLDER = r"""
import sys
from meaningbench.db.study import open_study
from meaningbench.db.writers import announced_writer

study = open_study(sys.argv[1])
raw = study.engine.raw_connection()
conn = raw.driver_connection
conn.execute("BEGIN IMMEDIATE")
with announced_writer(sys.argv[1], "import"):
    conn.execute("INSERT INTO study_setting (key, value) VALUES ('held', '1')")
    print("holding", flush=True)
    sys.stdin.readline()  # the test says when to let go
    conn.execute("COMMIT")
raw.close()
study.close()
"""


def _start_holder(path: Path) -> subprocess.Popen[str]:
    """A process that opens the study and holds its write lock (see HOLDER)."""
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip


@linux_only
def test_a_process_is_known_by_pid_and_start_time() -> None:
    me = this_process()
    assert me.started is not None and is_alive(me)
    # The same pid with another start time is a later process that reused it.
    assert not is_alive(replace(me, started=me.started - 3600))
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert not is_alive(ProcessId(int(child.stdout), me.host, None))
    # Another machine's process cannot be checked from here: it counts as alive.
    assert is_alive(ProcessId(os.getpid() + 10**7, "elsewhere.invalid", 1.0))


def test_a_write_waits_for_a_long_writer_and_names_it(tmp_path: Path) -> None:
    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    holder = _start_holder(path)
    notices: list[str] = []
    heard = threading.Event()
    errors: list[BaseException] = []

    def notice(message: str) -> None:
        notices.append(message)
        heard.set()

    def write() -> None:
        try:
            with study.session(write=True) as s:
                s.execute(text("INSERT INTO study_setting (key, value) VALUES ('mine', '1')"))
        except BaseException as exc:
            errors.append(exc)

    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        study.set_wait_policy(WaitPolicy(notice=notice))
        writer = threading.Thread(target=write)
        writer.start()
        assert heard.wait(60), "the write did not say what it waits for"
        assert notices == [f"waiting for the study (held by import, pid {holder.pid})"]
        assert writer.is_alive()  # still waiting, not failed
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        writer.join(60)
        assert not writer.is_alive() and errors == []
        assert holder.wait(60) == 0
    finally:
        holder.kill()
        holder.wait()
    with study.session() as s:
        keys = set(s.execute(text("SELECT key FROM study_setting")).scalars())
        assert {"held", "mine"} <= keys
    assert not Path(f"{path}-writer").exists()
    study.close()


def test_a_cancelled_wait_leaves_the_study_usable(tmp_path: Path) -> None:
    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")

    class Stop(Exception):
        pass

    def stop() -> None:
        raise Stop()

    study.set_wait_policy(WaitPolicy(notice=lambda _m: None, check=stop))
    with pytest.raises(Stop), study.session(write=True) as s:
        s.execute(text("INSERT INTO study_setting (key, value) VALUES ('lost', '1')"))
    other.execute("COMMIT")
    other.close()
    with study.session(write=True) as s:
        s.execute(text("INSERT INTO study_setting (key, value) VALUES ('kept', '1')"))
    with study.session() as s:
        keys = list(s.execute(text("SELECT key FROM study_setting")).scalars())
    assert "kept" in keys and "lost" not in keys
    study.close()


def test_a_0003_study_gets_run_owners_and_its_stray_running_run_is_interrupted(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.mbstudy"
    engine = make_engine(path)
    command.upgrade(alembic_config(engine), "0003")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO metric_run (metric, config, config_hash, label, versions, status, "
            "started_at, n_items, n_failed, elapsed_s) VALUES "
            "('bleu', '{}', 'h1', 'bleu', '{}', 'done', '2026-01-01', 5, 0, 1.0), "
            "('sari', '{}', 'h2', 'sari', '{}', 'running', '2026-01-01', 0, 0, 0.0)"
        )
    engine.dispose()
    study = open_study(path)
    try:
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (
                SCHEMA_HEAD,
            )
            assert conn.execute(
                "SELECT metric, status, owner_pid FROM metric_run ORDER BY id"
            ).fetchall() == [("bleu", "done", None), ("sari", "running", None)]
        finally:
            conn.close()
        # Started by a version that recorded no owner: nobody will finish it.
        assert interrupt_gone_runs(study) == [2]
        with study.session() as s:
            assert s.execute(text("SELECT status FROM metric_run ORDER BY id")).scalars().all() == [
                "done",
                "interrupted",
            ]
            with pytest.raises(Exception, match="CHECK constraint"):
                s.execute(text("UPDATE metric_run SET status = 'lost' WHERE id = 1"))
    finally:
        study.close()


@linux_only
def test_the_name_of_a_killed_writer_is_ignored_and_tidied(tmp_path: Path) -> None:
    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    holder = _start_holder(path)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        assert current_writer(path) == f"import, pid {holder.pid}"
    finally:
        holder.kill()  # kill -9: its transaction is rolled back, its name stays behind
        holder.wait()
    assert writer_file(path).exists() and current_writer(path) is None
    with study.session(write=True) as s:
        s.execute(text("INSERT INTO study_setting (key, value) VALUES ('next', '1')"))
    assert not writer_file(path).exists()
    with study.session() as s:
        keys = list(s.execute(text("SELECT key FROM study_setting")).scalars())
    assert "next" in keys
    study.close()


def test_a_write_gives_up_on_an_unnamed_holder_with_a_message(tmp_path: Path) -> None:
    from meaningbench.db.errors import StudyBusyError

    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    other = sqlite3.connect(path, isolation_level=None)  # a foreign program: no name
    other.execute("BEGIN IMMEDIATE")
    notices: list[str] = []
    study.set_wait_policy(WaitPolicy(notice=notices.append, unknown_limit_s=1.5))
    try:
        with (
            pytest.raises(StudyBusyError, match="the study is busy"),
            study.session(write=True) as s,
        ):
            s.execute(text("INSERT INTO study_setting (key, value) VALUES ('lost', '1')"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert notices == ["waiting for the study (held by another program)"]
    study.close()
