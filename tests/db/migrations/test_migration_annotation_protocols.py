"""Migration 0005: a study written at 0004 opens with its ratings intact and gains the span,
side-by-side and practice tables; the models and the migrations describe the same schema;
a downgrade gives the 0004 tables back with every rating."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.exc import IntegrityError

from meaningbench.db.engine import make_engine
from meaningbench.db.models import Base, RatingSpan
from meaningbench.db.study import SCHEMA_HEAD, alembic_config, open_study


def _study_at_0004(path: Path) -> None:
    engine = make_engine(path)
    command.upgrade(alembic_config(engine), "0004")
    with engine.begin() as conn:
        for sql in (
            "INSERT INTO dataset (name, imported_at, meta) VALUES ('d', '2026-01-01', '{}')",
            "INSERT INTO item (dataset_id, source, output, refs, source_group, pair_key, kind, "
            "meta) VALUES (1, 'A cat sat.', 'Cat sat.', '[]', 'g1', 'k1', 'regular', '{}')",
            "INSERT INTO dimension (name, scale, min_value, max_value, label_low, label_high, "
            "question, position, active) VALUES ('meaning', 'continuous', 0, 100, '', '', '', 0, 1)",
            "INSERT INTO annotator (name, kind, created_at, meta) VALUES "
            "('ann', 'named', '2026-01-01', '{}')",
            "INSERT INTO rating (item_id, annotator_id, dimension_id, value, submitted_at, flagged, "
            "state, origin) VALUES (1, 1, 1, 70, '2026-01-01', 0, 'current', 'ui')",
        ):
            conn.exec_driver_sql(sql)
    engine.dispose()


def test_a_0004_study_is_upgraded_and_keeps_its_ratings(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    _study_at_0004(path)
    study = open_study(path)
    try:
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (
                SCHEMA_HEAD,
            )
            assert conn.execute("SELECT value, display FROM rating").fetchall() == [(70.0, None)]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            assert {"rating_span", "practice_item", "practice_answer"} <= tables
        finally:
            conn.close()
        # The span checks hold: an empty span or an unknown severity is refused.
        for bad in (
            dict(start=3, end=3, severity="minor"),
            dict(start=0, end=3, severity="critical"),
        ):
            with pytest.raises(IntegrityError), study.session() as s:
                s.add(RatingSpan(rating_id=1, side="output", text="Cat", **bad))
        with study.session() as s:
            s.add(
                RatingSpan(rating_id=1, side="output", start=0, end=3, severity="major", text="Cat")
            )
    finally:
        study.close()


def test_models_and_migrations_agree_on_the_new_tables(tmp_path: Path) -> None:
    path = tmp_path / "new.mbstudy"
    _study_at_0004(path)
    open_study(path).close()
    engine = make_engine(path)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    touched = {"rating", "rating_span", "practice_item", "practice_answer"}
    ours = [d for d in diff if any(t in repr(d) for t in touched)]
    assert ours == []


def test_downgrade_to_0004_keeps_every_rating(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    _study_at_0004(path)
    open_study(path).close()
    engine = make_engine(path)
    command.downgrade(alembic_config(engine), "0004")
    engine.dispose()
    conn = sqlite3.connect(path)
    try:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(rating)")]
        assert "display" not in columns
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert not {"rating_span", "practice_item", "practice_answer"} & tables
        assert conn.execute("SELECT value FROM rating").fetchall() == [(70.0,)]
    finally:
        conn.close()
