"""Which errors are the user's to fix (a full disk, a read-only study) and read as one line,
and which stay bugs; produced for real where this machine can produce them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from meaningbench.db.errors import StudyReadOnlyError, StudyWriteError
from meaningbench.db.faults import describe_fault


def _sqlite_full(tmp_path: Path) -> sqlite3.OperationalError:
    conn = sqlite3.connect(tmp_path / "t.db")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA max_page_count = 2")  # SQLite's own SQLITE_FULL
    try:
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 1000,)] * 100)
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError("the page limit did not stop the insert")


def test_sqlite_full_through_sqlalchemy_is_a_full_disk(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 's.db'}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (x)"))
    with pytest.raises(OperationalError) as caught, engine.begin() as conn:
        conn.execute(text("PRAGMA max_page_count = 2"))
        for _ in range(100):
            conn.execute(text("INSERT INTO t VALUES (:x)"), {"x": "x" * 1000})
    engine.dispose()
    fault = describe_fault(caught.value, tmp_path / "s.db")
    assert isinstance(fault, StudyWriteError)
    assert str(fault).startswith(f"{tmp_path / 's.db'}: cannot write: the disk is full")
    assert "\n" not in str(fault)


def test_a_write_to_a_full_device_is_a_full_disk(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with pytest.raises(OSError) as caught, open("/dev/full", "w") as fh:
        fh.write("x")
        fh.flush()
    fault = describe_fault(caught.value, tmp_path / "out.csv", output=True)
    assert isinstance(fault, StudyWriteError)
    assert str(fault).startswith(f"{tmp_path / 'out.csv'}: cannot write: the disk is full")


def test_a_read_only_connection_refusing_a_write_is_a_read_only_study(tmp_path: Path) -> None:
    sqlite3.connect(tmp_path / "s.db").execute("CREATE TABLE t (x)").connection.close()
    conn = sqlite3.connect(f"{(tmp_path / 's.db').as_uri()}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.execute("INSERT INTO t VALUES (1)")
    conn.close()
    fault = describe_fault(caught.value, tmp_path / "s.db")
    assert isinstance(fault, StudyReadOnlyError)
    assert "the study is read-only" in str(fault) and "copy it to a writable folder" in str(fault)


def test_a_bug_met_while_handling_a_full_disk_stays_a_bug(tmp_path: Path) -> None:
    full = _sqlite_full(tmp_path)
    try:
        try:
            raise full
        except sqlite3.OperationalError:
            {}["missing"]  # a bug in the handler
    except KeyError as bug:
        assert describe_fault(bug) is None
    else:
        raise AssertionError("no KeyError")


def test_other_errors_are_not_faults() -> None:
    assert describe_fault(ValueError("bad value")) is None
    assert describe_fault(sqlite3.OperationalError("no such table: x")) is None
