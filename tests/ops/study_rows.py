"""What an op left in a study file, read with sqlite3 beside the engine: the rows of one
query, and every table's rows at once (a failed or cancelled op must leave them as they were).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any


def rows(path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()


def every_row(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's rows, sorted: two snapshots are equal when nothing was written."""
    conn = sqlite3.connect(path)
    try:
        tables = [
            t
            for (t,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {
            t: sorted(map(tuple, conn.execute(f'SELECT * FROM "{t}"')), key=repr) for t in tables
        }
    finally:
        conn.close()
