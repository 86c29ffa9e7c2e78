"""Engines for study files: WAL, foreign keys, full sync, a busy timeout — on every connection.

Transactions that write begin with BEGIN IMMEDIATE (`Study.session(write=True)`): the write
lock is taken up front, where waiting for it is safe. A deferred transaction that reads
and then writes cannot wait: in WAL mode, when another process committed since its read
began, SQLite answers SQLITE_BUSY at once, whatever the busy timeout. Reads stay deferred,
so they never wait for a writer.

A write that cannot get the lock within WAIT_STEP_MS says who holds it (see meaningbench.db.writers)
through the engine's `WaitPolicy` and tries again, for as long as the holder lives.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from meaningbench.db.errors import StudyBusyError

BUSY_TIMEOUT_MS = 10_000
# A write waits this long, silently, for each try at the lock: a short holder (a batch of
# scores, a rating) never shows a message, a long one (an import) shows it soon.
WAIT_STEP_MS = 1_000
# The session option that makes a transaction begin with BEGIN IMMEDIATE.
WRITE_OPTION = "meaningbench_write"


def _log_notice(message: str) -> None:
    import logging

    logging.getLogger("meaningbench.db").warning(message)


def _no_check() -> None:
    return None


@dataclass
class WaitPolicy:
    """How a write waits for a lock another process holds.

    `notice` receives "waiting for the study (held by …)" each time the holder changes;
    `check` runs between tries and may raise to stop waiting (a cancelled job). A holder
    that cannot be named (a foreign program) is waited for at most `unknown_limit_s`
    (None: the busy timeout, as a plain SQLite connection would).
    """

    notice: Callable[[str], None] = _log_notice
    check: Callable[[], None] = field(default=_no_check)
    unknown_limit_s: float | None = None


def _give_up() -> None:
    raise StudyBusyError("the study is busy: another process is writing to it")


# For writes that may as well not happen now (closing a run on the way out, tidying):
# one short try at the lock, then StudyBusyError.
NO_WAIT = WaitPolicy(notice=lambda _message: None, check=_give_up, unknown_limit_s=0.0)

_POLICIES: WeakKeyDictionary[Engine, WaitPolicy] = WeakKeyDictionary()


def set_wait_policy(engine: Engine, policy: WaitPolicy) -> None:
    _POLICIES[engine] = policy


def study_connection_class() -> type[sqlite3.Connection]:
    from meaningbench.db.study_files import StudyConnection

    return StudyConnection


def _on_connect(dbapi_conn: Any, _record: Any) -> None:
    from meaningbench.db.study_files import track

    track(dbapi_conn.execute("PRAGMA database_list").fetchone()[2], dbapi_conn)
    # Let SQLAlchemy manage transactions itself rather than pysqlite's implicit BEGINs,
    # so that an explicit BEGIN covers the whole unit of work (all-or-nothing imports).
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    # FULL: a committed rating survives a power cut, not only a crash of the program.
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cur.close()


def is_busy(exc: BaseException) -> bool:
    """Whether an sqlite3 error means another connection holds a lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(exc)
    return "database is locked" in text or "database is busy" in text


def begin_immediate(
    raw: sqlite3.Connection, study_path: str | Path, policy: WaitPolicy | None = None
) -> None:
    """BEGIN IMMEDIATE on a raw connection, waiting (and saying so) while another process
    holds the write lock. Raises StudyBusyError when an unnamed holder keeps it too long."""
    from meaningbench.db.writers import clear_stale_writer, current_writer

    policy = policy or WaitPolicy()
    limit_s = BUSY_TIMEOUT_MS / 1000 if policy.unknown_limit_s is None else policy.unknown_limit_s
    began = time.monotonic()
    said: str | None = None
    raw.execute(f"PRAGMA busy_timeout={WAIT_STEP_MS}")
    try:
        while True:
            try:
                raw.execute("BEGIN IMMEDIATE")
                # A long writer's name outlives it when it is killed: the holder tidies.
                clear_stale_writer(study_path)
                return
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
            waited = time.monotonic() - began
            holder = current_writer(study_path)
            if holder is None and waited >= limit_s:
                raise StudyBusyError(
                    f"the study is busy: another program has been writing to it for "
                    f"{round(waited)} s; try again when it is done"
                )
            text = f"held by {holder}" if holder else "held by another program"
            if text != said:
                policy.notice(f"waiting for the study ({text})")
                said = text
            policy.check()
    finally:
        raw.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def _on_begin(conn: Any) -> None:
    raw = conn.connection.driver_connection
    if conn.get_execution_options().get(WRITE_OPTION):
        begin_immediate(raw, conn.engine.url.database, _POLICIES.get(conn.engine))
    else:
        raw.execute("BEGIN")


def make_engine(path: str | Path, *, echo: bool = False) -> Engine:
    """An engine for one study file. Each thread must use its own Session from it."""
    # Usable from any thread: a study whose log was replaced closes its pooled connections
    # from the thread that noticed (see meaningbench.db.study_files).
    engine = create_engine(
        f"sqlite:///{Path(path)}",
        echo=echo,
        future=True,
        connect_args={"check_same_thread": False, "factory": study_connection_class()},
    )
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def _on_connect_read_only(dbapi_conn: Any, _record: Any) -> None:
    # No journal_mode pragma: the study is WAL already, and asking to set it would be a
    # write. query_only makes any write attempt fail at once, inside SQLite.
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA query_only=ON")
    cur.close()


def make_read_only_engine(uri: str) -> Engine:
    """An engine reading a study through an SQLite URI (`mode=ro` or `immutable=1`,
    chosen by `meaningbench.db.access.read_only_uris`)."""
    import sqlite3

    from sqlalchemy.pool import QueuePool

    engine = create_engine(
        "sqlite://",
        creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False),
        poolclass=QueuePool,
        future=True,
    )
    event.listen(engine, "connect", _on_connect_read_only)
    event.listen(engine, "begin", _on_begin)
    return engine
