"""The study's language: one ISO 639-1 code per study, kept in the `study_setting` table.

Chosen at import (`--language`, default `en`: every study made before languages existed
is English, and migration 0006 says so in its file) and changed with `meaningbench
language`. A study that already holds items keeps its language through an import: a file
of another language is refused, so that one study never mixes languages under one code.
What a language changes in scoring is in `meaningbench.metrics.languages`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from meaningbench.errors import InputError
from meaningbench.metrics.languages import DEFAULT_LANGUAGE, language_label, normalize_language

if TYPE_CHECKING:
    from meaningbench.db.study import Study

LANGUAGE_KEY = "language"


def checked_language(code: str) -> str:
    """The ISO 639-1 code the user typed, or an InputError saying what is wrong."""
    try:
        return normalize_language(code)
    except ValueError as exc:
        raise InputError(f"language: {exc}") from None


def stored_language(raw: object) -> str:
    """The language a `study_setting` value holds (JSON text, or already decoded)."""
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:  # a value written without JSON quoting
            value = raw
    return value if isinstance(value, str) and value else DEFAULT_LANGUAGE


def read_language(conn: sqlite3.Connection) -> str:
    """The language as stored, read on a plain SQLite connection (the importer's)."""
    row = conn.execute("SELECT value FROM study_setting WHERE key = ?", (LANGUAGE_KEY,)).fetchone()
    return stored_language(row[0] if row else None)


_UPSERT = (
    "INSERT INTO study_setting (key, value) VALUES (:k, :v) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
)


def write_language(conn: sqlite3.Connection, code: str) -> None:
    """Store the language in the caller's transaction (an import's, so it is all or nothing)."""
    conn.execute(_UPSERT, {"k": LANGUAGE_KEY, "v": json.dumps(code)})


def study_language(study: Study) -> str:
    from sqlalchemy import text

    with study.engine.connect() as conn:
        value = conn.execute(
            text("SELECT value FROM study_setting WHERE key = :k"), {"k": LANGUAGE_KEY}
        ).scalar()
    return stored_language(value)


def set_study_language(study: Study, code: str) -> tuple[str, str]:
    """Set the study's language; returns (the old code, the new code)."""
    new = checked_language(code)
    old = study_language(study)
    if new != old:
        from sqlalchemy import text

        with study.session(write=True) as s:
            s.execute(text(_UPSERT), {"k": LANGUAGE_KEY, "v": json.dumps(new)})
    return old, new


def import_language(conn: sqlite3.Connection, asked: str | None, has_items: bool) -> str:
    """The language an import leaves the study in: the one asked for (checked against the
    study's items), else the study's own."""
    current = read_language(conn)
    if asked is None:
        return current
    code = checked_language(asked)
    if code != current and has_items:
        raise InputError(
            f"language: this study holds {language_label(current)} texts already; import "
            f"{language_label(code)} texts into a new study, or change the study's language "
            f"first (meaningbench language STUDY {code})"
        )
    if code != current:
        write_language(conn, code)
    return code
