"""Who holds a study's write lock for a long transaction, so that waiters can say so.

SQLite tells a waiting process only that the database is locked. A long writer (an import,
all or nothing in one transaction) first commits a `study_writer` row naming itself, then
takes the lock; it deletes the row when its transaction ends. A waiter reads the rows (in
WAL mode a read never waits for the writer) and names the first live one. Rows of a
process that was killed are skipped and removed by the next writer that announces itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from db.models import sql_now
from db.processes import ProcessId, is_alive, this_process


def current_writer(raw: sqlite3.Connection) -> str | None:
    """ "import, pid 123" for the live process that announced a long write; None if none."""
    try:
        rows = raw.execute(
            "SELECT command, pid, host, started FROM study_writer ORDER BY id"
        ).fetchall()
    except sqlite3.Error:  # an older schema, or the table locked by a migration
        return None
    for command, pid, host, started in rows:
        owner = ProcessId(int(pid), str(host), started)
        if is_alive(owner):
            return f"{command}, {owner.describe()}"
    return None


def _announce(raw: sqlite3.Connection, command: str, me: ProcessId) -> int:
    from db.engine import begin_immediate

    begin_immediate(raw)
    try:
        stale = [
            row_id
            for row_id, pid, host, started in raw.execute(
                "SELECT id, pid, host, started FROM study_writer"
            ).fetchall()
            if not is_alive(ProcessId(int(pid), str(host), started))
        ]
        raw.executemany("DELETE FROM study_writer WHERE id = ?", [(r,) for r in stale])
        cur = raw.execute(
            "INSERT INTO study_writer (command, pid, host, started, since) VALUES (?, ?, ?, ?, ?)",
            (command, me.pid, me.host, me.started, sql_now()),
        )
        row_id = int(cur.lastrowid or 0)
        raw.execute("COMMIT")
    except BaseException:
        if raw.in_transaction:
            raw.execute("ROLLBACK")
        raise
    return row_id


@contextmanager
def announced_writer(raw: sqlite3.Connection, command: str) -> Iterator[None]:
    """Name this process as the holder of the write lock while the block runs.

    Call it on the connection that will hold the lock, outside a transaction, and begin
    that transaction inside the block. The row is removed afterwards whatever happened.
    """
    row_id = _announce(raw, command, this_process())
    try:
        yield
    finally:
        if raw.in_transaction:
            raw.execute("ROLLBACK")
        # On failure, a stale row is skipped by waiters and removed by the next writer.
        with suppress(sqlite3.Error):
            raw.execute("DELETE FROM study_writer WHERE id = ?", (row_id,))
