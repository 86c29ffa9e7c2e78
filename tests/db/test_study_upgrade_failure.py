"""An upgrade of an older study that fails: the study is left as it was, the backup copy is
made once however often it is tried, and the message says where that copy is."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from meaningbench.db.errors import MigrationError
from meaningbench.db.study import SCHEMA_HEAD, open_study
from tests.fault_tools import (
    assert_one_line_error,
    cli,
    file_size_limit,
    files_in,
    make_old_study,
    study_state,
)


def _annotator_kinds(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT kind FROM annotator")]
    finally:
        conn.close()


def test_a_failed_upgrade_leaves_the_study_and_one_backup(tmp_path: Path) -> None:
    study = make_old_study(tmp_path / "old.mbstudy", dangling=True)
    before = study_state(study)
    for _attempt in range(3):
        done = cli("info", study)
        line = assert_one_line_error(
            done,
            f"upgrading the study from schema 0002 to {SCHEMA_HEAD} failed",
            "the study was left as it was",
            "the copy made before the upgrade is",
        )
    backups = [name for name in files_in(tmp_path) if ".bak-0002-" in name]
    assert len(backups) == 1, files_in(tmp_path)
    assert line.rstrip().split(" is ", 2)[-1].startswith(str(tmp_path / backups[0]))
    assert files_in(tmp_path) == sorted(["old.mbstudy", backups[0]])
    # As it was: schema 0002 (the first migration step was not kept), data intact.
    assert study_state(study) == before
    assert _annotator_kinds(study) == ["human"]
    assert study_state(tmp_path / backups[0]) == before


def test_the_upgrade_error_carries_the_backup(tmp_path: Path) -> None:
    study = make_old_study(tmp_path / "old.mbstudy", dangling=True)
    with pytest.raises(MigrationError, match="dangling reference") as caught:
        open_study(study)
    assert ".bak-0002-" in str(caught.value)


def test_a_backup_that_cannot_be_written_stops_the_upgrade(tmp_path: Path) -> None:
    study = make_old_study(tmp_path / "old.mbstudy")
    before = study_state(study)
    # Room for SQLite's shared-memory file, not for a copy of the study.
    limit = min(study.stat().st_size - 4096, 100_000)
    done = cli("info", study, preexec=file_size_limit(limit))
    assert_one_line_error(done, "the backup copy", "could not be written", "not changed")
    assert files_in(tmp_path) == ["old.mbstudy"]
    assert study_state(study) == before


def test_a_good_older_study_is_still_upgraded(tmp_path: Path) -> None:
    study = make_old_study(tmp_path / "old.mbstudy")
    done = cli("info", study)
    assert done.returncode == 0, done.stderr
    assert study_state(study)[3] == SCHEMA_HEAD
    assert _annotator_kinds(study) == ["named"]
    assert len([n for n in files_in(tmp_path) if ".bak-0002-" in n]) == 1
