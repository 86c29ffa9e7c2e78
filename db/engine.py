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
