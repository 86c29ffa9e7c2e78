"""The import op that `meaningbench import` and the import dialog share: into an open
study's file, or into a new study that is named only once the import has committed."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from meaningbench.db.errors import StudyFileError
from meaningbench.db.study import create_study
from meaningbench.errors import InputError
from meaningbench.ops.importing import import_job
from meaningbench.runtime import Cancelled, JobContext

GOOD = "source,output,system,meaning\na,b,s1,50\nc,d,s1,70\ne,f,s2,10\n"
# The last row's rating is no number: the import stops there, all or nothing.
BAD = "source,output,system,meaning\na,b,s1,50\nc,d,s1,fifty\n"


def _file(folder: Path, text: str) -> Path:
    path = folder / "ratings.csv"
    path.write_text(text, encoding="utf-8")
    return path


def _items(study: Path) -> int:
    conn = sqlite3.connect(study)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM item").fetchone()[0])
    finally:
        conn.close()


def _import(study: Path, data: Path, *, new: bool, ctx: JobContext | None = None) -> object:
    return import_job(ctx or JobContext(), study, data, "auto", [], None, None, new=new)


def test_a_new_study_is_made_by_the_import(tmp_path: Path) -> None:
    data = _file(tmp_path, GOOD)
    target = tmp_path / "studies" / "new.mbstudy"
    target.parent.mkdir()
    wrote = import_job(JobContext(), target, data, "auto", [], None, None, new=True)
    assert wrote.changes.everything
    assert wrote.value.rows_read == 3
    assert sorted(target.parent.iterdir()) == [target]  # no partial file left beside it
    assert _items(target) == 3


def test_a_failed_import_into_a_new_study_leaves_nothing(tmp_path: Path) -> None:
    data = _file(tmp_path, BAD)
    folder = tmp_path / "studies"
    folder.mkdir()
    with pytest.raises(InputError):
        _import(folder / "new.mbstudy", data, new=True)
    assert sorted(folder.iterdir()) == []


def test_a_cancelled_import_into_a_new_study_leaves_nothing(tmp_path: Path) -> None:
    data = _file(tmp_path, GOOD)
    folder = tmp_path / "studies"
    folder.mkdir()
    ctx = JobContext()
    ctx.cancel.cancel()
    with pytest.raises(Cancelled):
        _import(folder / "new.mbstudy", data, new=True, ctx=ctx)
    assert sorted(folder.iterdir()) == []


def test_an_import_into_an_existing_study_adds_to_it(tmp_path: Path) -> None:
    target = tmp_path / "old.mbstudy"
    create_study(target).close()
    _import(target, _file(tmp_path, GOOD), new=False)
    assert _items(target) == 3
    with pytest.raises(InputError):
        _import(target, _file(tmp_path, BAD), new=False)
    assert _items(target) == 3  # the failed import changed nothing


def test_a_dangling_link_is_named_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "link.mbstudy"
    os.symlink(tmp_path / "gone" / "study.mbstudy", target)
    with pytest.raises(StudyFileError, match="symbolic link"):
        _import(target, _file(tmp_path, GOOD), new=True)
    assert target.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == [
        "link.mbstudy",
        "ratings.csv",
    ]
