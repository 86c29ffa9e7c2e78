"""Helpers for the importer tests: write data files, snapshot a study row for row."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meaningbench.db.study import Study, open_study
from meaningbench.errors import InputError


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def snapshot(study: Study) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, read with the plain sqlite3 module (an independent reader)."""
    conn = sqlite3.connect(study.path)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        schema = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        out: dict[str, list[tuple[Any, ...]]] = {"__schema__": schema}
        for table in tables:
            out[table] = conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
        return out
    finally:
        conn.close()


def count(study: Study, sql: str, *params: Any) -> Any:
    conn = sqlite3.connect(study.path)
    try:
        return conn.execute(sql, params).fetchone()[0]
    finally:
        conn.close()


def rows(study: Study, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(study.path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def refused_unchanged(study_path: Path, attempt: Callable[[Study], object]) -> InputError:
    """`attempt` on the study raises InputError and leaves the file as it was, byte for
    byte and row for row; returns the error."""
    before_bytes = study_path.read_bytes()
    study = open_study(study_path)
    before = snapshot(study)
    try:
        with pytest.raises(InputError) as info:
            attempt(study)
        assert snapshot(study) == before
    finally:
        study.close()
    assert study_path.read_bytes() == before_bytes
    return info.value
