"""Migration 0006: a study written at 0005 opens with its data intact and is recorded as
English (what it was scored as); a downgrade takes the language away and nothing else."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from alembic import command

from meaningbench.datasets.language import study_language
from meaningbench.db.engine import make_engine
from meaningbench.db.study import SCHEMA_HEAD, alembic_config, head_revision, open_study
from tests.db.migrations.study_at import dump


def _study_at_0005(path: Path) -> None:
    engine = make_engine(path)
    command.upgrade(alembic_config(engine), "0005")
    with engine.begin() as conn:
        for sql in (
            "INSERT INTO dataset (name, imported_at, meta) VALUES ('d', '2026-01-01', '{}')",
            "INSERT INTO item (dataset_id, source, output, refs, source_group, pair_key, kind, "
            "meta) VALUES (1, 'A cat sat.', 'Cat sat.', '[]', 'g1', 'k1', 'regular', '{}')",
            "INSERT INTO study_setting (key, value) VALUES ('name', '\"pilot\"')",
            "INSERT INTO metric_run (metric, config, config_hash, label, status, started_at, "
            "versions, n_items, n_failed, elapsed_s) VALUES ('bleu', '{}', 'h1', 'bleu', 'done', "
            "'2026-01-01', '{}', 1, 0, 0.5)",
        ):
            conn.exec_driver_sql(sql)
    engine.dispose()


def _dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    return dump(path, ("dataset", "item", "metric_run"))


def test_a_0005_study_is_upgraded_keeps_its_data_and_is_english(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    _study_at_0005(path)
    before = _dump(path)
    study = open_study(path)
    try:
        assert study_language(study) == "en"
    finally:
        study.close()
    assert head_revision() == SCHEMA_HEAD
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (SCHEMA_HEAD,)
        settings = dict(conn.execute("SELECT key, value FROM study_setting").fetchall())
    finally:
        conn.close()
    assert settings == {"name": '"pilot"', "language": '"en"'}
    assert _dump(path) == before


def test_a_new_study_is_english_until_told_otherwise(tmp_path: Path) -> None:
    study = open_study(tmp_path / "new.mbstudy", create=True)
    try:
        assert study_language(study) == "en"
    finally:
        study.close()


def test_downgrade_to_0005_removes_only_the_language(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    _study_at_0005(path)
    before = _dump(path)
    open_study(path).close()
    engine = make_engine(path)
    command.downgrade(alembic_config(engine), "0005")
    engine.dispose()
    conn = sqlite3.connect(path)
    try:
        settings = dict(conn.execute("SELECT key, value FROM study_setting").fetchall())
    finally:
        conn.close()
    assert settings == {"name": '"pilot"'}
    assert _dump(path) == before
