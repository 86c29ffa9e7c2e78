"""Migration 0008: a study written at 0007 with error spans opens with its data intact and
then stores span proposals; a downgrade takes the proposals away and nothing else."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from alembic import command

from meaningbench.db.engine import make_engine
from meaningbench.db.study import SCHEMA_HEAD, alembic_config, open_study
from tests.db.migrations.study_at import dump, study_at

ROWS = (
    "INSERT INTO dimension (name, scale, min_value, max_value, label_low, label_high, question, "
    "position, active) VALUES ('meaning', 'continuous', 0, 100, '', '', '', 0, 1)",
    "INSERT INTO dataset (name, imported_at, meta) VALUES ('d', '2026-01-01', '{}')",
    "INSERT INTO item (dataset_id, source, output, refs, source_group, pair_key, kind, "
    "meta) VALUES (1, 'A cat sat on the mat.', 'A dog sat.', '[]', 'g1', 'k1', 'regular', '{}')",
    "INSERT INTO annotator (name, kind, created_at, meta) VALUES ('ann', 'named', "
    "'2026-01-01', '{}')",
    "INSERT INTO rating (item_id, annotator_id, dimension_id, value, submitted_at, flagged, "
    "state, origin) VALUES (1, 1, 1, 40, '2026-01-01', 0, 'current', 'ui')",
    'INSERT INTO rating_span (rating_id, side, start, "end", severity, text) '
    "VALUES (1, 'output', 2, 5, 'major', 'dog')",
)
TABLES = ("item", "annotator", "rating", "rating_span")
PROPOSAL = (
    'INSERT INTO span_proposal (rating_id, span_id, side, start, "end", severity, text, '
    "model, config_hash, template, fate) VALUES (1, {span}, 'output', 2, 5, 'minor', 'dog', "
    "'smollm2', 'abc', 'esa', '{fate}')"
)


def _version(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT version_num FROM alembic_version").fetchone()[0])
    finally:
        conn.close()


def test_a_0007_study_upgrades_with_its_spans_and_then_keeps_proposals(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    study_at(path, "0007", ROWS)
    before = dump(path, TABLES)
    study = open_study(path)
    assert study.backup_path is not None and study.backup_path.exists()
    study.close()
    assert dump(path, TABLES) == before
    assert _version(path) == SCHEMA_HEAD == "0008"
    conn = sqlite3.connect(path)
    try:
        conn.execute(PROPOSAL.format(span=1, fate="edited"))
        # A deleted proposal has no span, a kept or edited one must have one.
        for bad in (
            PROPOSAL.format(span=1, fate="deleted"),
            PROPOSAL.format(span="NULL", fate="kept"),
        ):
            try:
                conn.execute(bad)
            except sqlite3.IntegrityError:
                continue
            raise AssertionError(f"accepted: {bad}")
        conn.commit()
        assert conn.execute("SELECT fate FROM span_proposal").fetchall() == [("edited",)]
    finally:
        conn.close()


def test_downgrade_to_0007_removes_only_the_proposals(tmp_path: Path) -> None:
    path = tmp_path / "old.mbstudy"
    study_at(path, "0007", ROWS)
    before = dump(path, TABLES)
    open_study(path).close()
    conn = sqlite3.connect(path)
    conn.execute(PROPOSAL.format(span="NULL", fate="deleted"))
    conn.commit()
    conn.close()
    engine = make_engine(path)
    command.downgrade(alembic_config(engine), "0007")
    engine.dispose()
    assert dump(path, TABLES) == before
    assert _version(path) == "0007"
    conn = sqlite3.connect(path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()
    assert "span_proposal" not in names
