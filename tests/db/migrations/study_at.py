"""Study files at an older schema revision, and their tables, for the migration tests."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from alembic import command

from meaningbench.db.engine import make_engine
from meaningbench.db.study import alembic_config


def study_at(path: Path, revision: str, rows: Sequence[str]) -> None:
    """A study file at `revision`, holding what the SQL statements `rows` insert."""
    engine = make_engine(path)
    command.upgrade(alembic_config(engine), revision)
    with engine.begin() as conn:
        for sql in rows:
            conn.exec_driver_sql(sql)
    engine.dispose()


def dump(path: Path, tables: Sequence[str]) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the tables, in id order, read with plain sqlite3."""
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}
    finally:
        conn.close()
