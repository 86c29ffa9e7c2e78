"""Span annotations imported from a file through the op that `meaningbench spans import`
runs: all or nothing, and the command's words on the result."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from meaningbench.cli import main
from meaningbench.db.models import Rating, RatingSpan
from meaningbench.errors import UserError
from meaningbench.ops.spans import import_spans_job
from meaningbench.runtime import JobContext
from tests.annotation.test_spans import _canonical_file, _study


def _count(study_path: Path, model: type) -> int:
    from meaningbench.db.study import open_study

    with open_study(study_path) as st, st.session() as s:
        return int(s.scalar(select(func.count()).select_from(model)) or 0)


def test_the_op_imports_the_file_and_says_every_screen_reloads(tmp_path: Path) -> None:
    study = _study(tmp_path / "esa.mbstudy")
    try:
        wrote = import_spans_job(study, Path(_file(tmp_path)))(JobContext())
    finally:
        study.close()
    assert (wrote.value.ratings, wrote.value.spans) == (3, 3)
    assert wrote.changes.everything
    assert _count(tmp_path / "esa.mbstudy", Rating) == 3
    assert _count(tmp_path / "esa.mbstudy", RatingSpan) == 3


def test_a_second_import_of_the_file_is_refused_and_stores_nothing(tmp_path: Path) -> None:
    study = _study(tmp_path / "esa.mbstudy")
    path = Path(_file(tmp_path))
    try:
        import_spans_job(study, path)(JobContext())
        with pytest.raises(UserError, match="already rated"):
            import_spans_job(study, path)(JobContext())
    finally:
        study.close()
    assert _count(tmp_path / "esa.mbstudy", Rating) == 3


def test_the_command_reports_what_the_op_imported(tmp_path: Path, capsys) -> None:
    _study(tmp_path / "esa.mbstudy").close()
    path = _file(tmp_path)
    assert main(["spans", "import", str(tmp_path / "esa.mbstudy"), path]) == 0
    assert capsys.readouterr().out == f"imported 3 span ratings (3 spans) from {path}\n"


def _file(folder: Path) -> str:
    _canonical_file(folder / "in.jsonl")
    return str(folder / "in.jsonl")
