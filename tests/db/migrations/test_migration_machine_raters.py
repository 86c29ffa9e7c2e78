"""Migration 0007: a study written at 0006 opens with its data intact and accepts a machine
rater; a downgrade takes the machine raters and their ratings away and nothing else."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command

from meaningbench.db.engine import make_engine
from meaningbench.db.study import SCHEMA_HEAD, alembic_config, open_study
from tests.db.migrations.study_at import dump, study_at

ROWS = (
    "INSERT INTO dimension (name, scale, min_value, max_value, label_low, label_high, question, "
    "position, active) VALUES ('meaning', 'continuous', 0, 100, '', '', '', 0, 1)",
    "INSERT INTO dataset (name, imported_at, meta) VALUES ('d', '2026-01-01', '{}')",
    "INSERT INTO item (dataset_id, source, output, refs, source_group, pair_key, kind, "
    "meta) VALUES (1, 'A cat sat.', 'Cat sat.', '[]', 'g1', 'k1', 'regular', '{}')",
    "INSERT INTO annotator (name, kind, created_at, meta) VALUES ('ann', 'named', "
    "'2026-01-01', '{}')",
    "INSERT INTO rating (item_id, annotator_id, dimension_id, value, submitted_at, flagged, "
    "state, origin) VALUES (1, 1, 1, 70, '2026-01-01', 0, 'current', 'ui')",
)
MACHINE = "INSERT INTO annotator (name, kind, created_at, meta) VALUES ('judge', 'machine', '2026-01-01', '{}')"


def _study_at_0006(path: Path) -> None:
    study_at(path, "0006", ROWS)


def _dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    return dump(path, ("item", "annotator", "rating"))


def test_a_0006_study_refuses_a_machine_rater_until_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    _study_at_0006(path)
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(MACHINE)
    conn.close()
    before = _dump(path)
    open_study(path).close()
    assert _dump(path) == before
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (SCHEMA_HEAD,)
        conn.execute(MACHINE)
        conn.commit()
    finally:
        conn.close()


def test_downgrade_to_0006_removes_only_the_machine_raters(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    _study_at_0006(path)
    before = _dump(path)
    open_study(path).close()
    conn = sqlite3.connect(path)
    conn.execute(MACHINE)
    conn.execute(
        "INSERT INTO rating (item_id, annotator_id, dimension_id, value, submitted_at, flagged, "
        "state, origin) VALUES (1, 2, 1, 40, '2026-01-01', 0, 'current', 'judge:llm_judge')"
    )
    conn.commit()
    conn.close()
    engine = make_engine(path)
    command.downgrade(alembic_config(engine), "0006")
    engine.dispose()
    assert _dump(path) == before
