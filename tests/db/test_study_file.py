"""The study file: pragmas, migrations with a backup, refusal of newer schemas."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import select

from meaningbench.db.engine import make_engine
from meaningbench.db.errors import NewerSchemaError, StudyFileError
from meaningbench.db.models import Dataset, Dimension, Item
from meaningbench.db.study import alembic_config, create_study, head_revision, open_study


def test_new_study_has_pragmas_and_default_dimensions(tmp_path: Path) -> None:
    study = create_study(tmp_path / "s.mbstudy")
    with study.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
    with study.session() as s:
        names = s.scalars(select(Dimension.name).order_by(Dimension.position)).all()
    assert names == ["meaning", "fluency", "simplicity"]
    study.close()


def test_session_rolls_back_on_error(new_study) -> None:
    with pytest.raises(RuntimeError), new_study.session() as s:
        s.add(Dataset(name="x"))
        s.flush()
        raise RuntimeError("boom")
    with new_study.session() as s:
        assert s.scalar(select(Dataset).where(Dataset.name == "x")) is None


def test_foreign_keys_are_enforced(new_study) -> None:
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError), new_study.session() as s:
        s.add(Item(dataset_id=999, source="a", output="b", source_group="g", pair_key="k"))
        s.flush()


def test_first_revision_study_is_upgraded_after_backup(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    engine = make_engine(path)
    command.upgrade(alembic_config(engine), "0001")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO dataset (name, imported_at, meta) VALUES ('old', '2026-01-01', '{}')"
        )
        conn.exec_driver_sql(
            "INSERT INTO item (dataset_id, source, output, refs, source_group, pair_key, kind, meta) "
            "VALUES (1, 'A cat sat.', 'Cat sat.', '[]', 'g1', 'k1', 'regular', '{}')"
        )
    engine.dispose()

    study = open_study(path)
    assert study.backup_path is not None and study.backup_path.exists()
    with study.session() as s:
        assert s.scalar(select(Item.output)) == "Cat sat."
    with study.engine.connect() as conn:
        tables = {
            r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type='table'")
        }
        rev = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    assert {"scene", "registered_model"} <= tables
    assert rev == head_revision()
    study.close()
    # The backup is the study as it was: first revision, same data.
    backup = sqlite3.connect(study.backup_path)
    assert backup.execute("SELECT version_num FROM alembic_version").fetchone() == ("0001",)
    assert backup.execute("SELECT output FROM item").fetchone() == ("Cat sat.",)
    backup.close()


def test_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "new.mbstudy"
    create_study(path).close()
    con = sqlite3.connect(path)
    con.execute("UPDATE alembic_version SET version_num = '9999_future'")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(NewerSchemaError, match="newer MeaningBench"):
        open_study(path)
    assert path.read_bytes() == before


def test_not_a_study_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.mbstudy"
    path.write_text("hello")
    with pytest.raises(StudyFileError, match="not an SQLite file"):
        open_study(path)
    with pytest.raises(StudyFileError, match="no such study"):
        open_study(tmp_path / "missing.mbstudy")


def test_fast_schema_head_matches_the_migration_scripts() -> None:
    from meaningbench.db.study import SCHEMA_HEAD

    assert head_revision() == SCHEMA_HEAD
