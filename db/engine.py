"""Engines for study files: WAL, foreign keys, full sync, a busy timeout — on every connection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

BUSY_TIMEOUT_MS = 10_000


def _on_connect(dbapi_conn: Any, _record: Any) -> None:
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


def _on_begin(conn: Any) -> None:
    conn.exec_driver_sql("BEGIN")


def make_engine(path: str | Path, *, echo: bool = False) -> Engine:
    """An engine for one study file. Each thread must use its own Session from it."""
    engine = create_engine(f"sqlite:///{Path(path)}", echo=echo, future=True)
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
    chosen by `db.access.read_only_uris`)."""
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
