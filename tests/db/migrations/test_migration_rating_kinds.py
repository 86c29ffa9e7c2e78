"""Migration 0003: a study written at 0002 opens with its raters named, its aggregates kept,
and every rating still there (the annotator table is copied with foreign keys off)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy.exc import IntegrityError

from meaningbench.db.engine import make_engine
from meaningbench.db.models import Annotator
from meaningbench.db.study import SCHEMA_HEAD, alembic_config, open_study


def _study_at_0002(path: Path) -> None:
    engine = make_engine(path)
    command.upgrade(alembic_config(engine), "0002")
    with engine.begin() as conn:
        for sql in (
            "INSERT INTO dataset (name, imported_at, meta) VALUES ('csmd', '2026-01-01', '{}')",
            "INSERT INTO item (dataset_id, source, output, refs, source_group, pair_key, kind, "
            "meta) VALUES (1, 'A cat sat.', 'Cat sat.', '[]', 'g1', 'k1', 'regular', '{}')",
            "INSERT INTO dimension (name, scale, min_value, max_value, label_low, label_high, "
            "question, position, active) VALUES ('meaning', 'continuous', 0, 100, '', '', '', 0, 1)",
            "INSERT INTO annotator (name, kind, created_at, meta) VALUES "
            "('ann', 'human', '2026-01-01', '{}'), ('aggregate:csmd', 'aggregate', '2026-01-01', '{}')",
            "INSERT INTO rating (item_id, annotator_id, dimension_id, value, submitted_at, flagged, "
            "state, origin) VALUES (1, 1, 1, 70, '2026-01-01', 0, 'current', 'ui'), "
            "(1, 2, 1, 64.5, '2026-01-01', 0, 'current', 'import:train.tsv')",
            "INSERT INTO queue_entry (annotator_id, item_id, position, skips, done) "
            "VALUES (1, 1, 0.5, 0, 1)",
        ):
            conn.exec_driver_sql(sql)
    engine.dispose()


def test_a_0002_study_is_upgraded_with_kinds_and_every_rating(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    _study_at_0002(path)
    study = open_study(path)
    try:
        assert study.backup_path is not None
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (
                SCHEMA_HEAD,
            )
            assert conn.execute("SELECT name, kind FROM annotator ORDER BY id").fetchall() == [
                ("ann", "named"),
                ("aggregate:csmd", "aggregate"),
            ]
            assert conn.execute(
                "SELECT annotator_id, value FROM rating ORDER BY id"
            ).fetchall() == [(1, 70.0), (2, 64.5)]
            assert conn.execute("SELECT COUNT(*) FROM queue_entry").fetchone() == (1,)
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        finally:
            conn.close()
        # The new constraint holds, and enforcement is back on for the study's connections.
        with pytest.raises(IntegrityError), study.session() as s:
            s.add(Annotator(name="x", kind="human"))
        with study.session() as s:
            s.add(Annotator(name="crowd", kind="anonymous"))
        with study.engine.connect() as c:
            assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        study.close()


def test_downgrade_returns_the_old_kinds(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    _study_at_0002(path)
    open_study(path).close()
    engine = make_engine(path)
    command.downgrade(alembic_config(engine), "0002")
    engine.dispose()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT kind FROM annotator ORDER BY id").fetchall() == [
            ("human",),
            ("aggregate",),
        ]
        assert conn.execute("SELECT COUNT(*) FROM rating").fetchone() == (2,)
    finally:
        conn.close()
