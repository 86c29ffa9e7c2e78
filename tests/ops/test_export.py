"""The export op on a real study: the table written holds the study's items or ratings, the
study itself is left as it was (an export is no write: its result carries no changes), and a
cancelled or refused export leaves no file behind, nor changes one already there."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from meaningbench.datasets import exporters
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.export import export_job
from meaningbench.queries.export import cells_note
from meaningbench.runtime import Cancelled, JobContext
from meaningbench.runtime.changes import changes_of
from tests.analysis.studybuild import add_items, add_ratings
from tests.ops.study_rows import every_row


def _rated(study: Study) -> list[int]:
    ids = add_items(study, [("a b c", "a b", "s1"), ("d e f", "=d e", "s2")])
    add_ratings(study, "ann", {ids[0]: 20.0, ids[1]: 80.0})
    return ids


def _beside(study: Study) -> list[str]:
    """The files beside the study's own (its log files aside)."""
    folder = study.path.parent
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(study.path.name))


def test_an_export_writes_the_items_and_leaves_the_study_as_it_was(
    new_study: Study, tmp_path: Path
) -> None:
    _rated(new_study)
    before = every_row(new_study.path)
    out = tmp_path / "items.csv"
    report = export_job(JobContext(), new_study.path, out, ratings=False)
    assert not changes_of(report)
    assert (report.table, report.rows, report.cells_quoted) == ("items", 2, 1)
    with out.open(encoding="utf-8", newline="") as fh:
        written = list(csv.DictReader(fh))
    assert [(r["source"], r["output"]) for r in written] == [("a b c", "a b"), ("d e f", "'=d e")]
    assert cells_note(report).startswith("spreadsheet-safe: 1 text cells")
    assert every_row(new_study.path) == before


def test_an_export_of_the_ratings_holds_one_row_per_rating(
    new_study: Study, tmp_path: Path
) -> None:
    ids = _rated(new_study)
    out = tmp_path / "ratings.jsonl"
    report = export_job(JobContext(), new_study.path, out, ratings=True)
    assert (report.table, report.rows, report.cells) == ("ratings", 2, "raw")
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["item_id"], r["annotator"], r["rating"]) for r in lines] == [
        (ids[0], "ann", 20.0),
        (ids[1], "ann", 80.0),
    ]


def test_a_cancelled_or_refused_export_leaves_the_file_as_it_was(
    new_study: Study, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _rated(new_study)
    monkeypatch.setattr(exporters, "PROGRESS_EVERY", 1)  # a check after every row
    out = tmp_path / "items.csv"
    ctx = JobContext()
    ctx.cancel.cancel()
    with pytest.raises(Cancelled):
        export_job(ctx, new_study.path, out, ratings=False)
    assert _beside(new_study) == []
    out.write_text("an earlier export\n", encoding="utf-8")
    with pytest.raises(Cancelled):
        export_job(ctx, new_study.path, out, ratings=True)
    assert out.read_text(encoding="utf-8") == "an earlier export\n"
    before = every_row(new_study.path)
    with pytest.raises(UserError, match="by the extension"):
        export_job(JobContext(), new_study.path, new_study.path, ratings=False)
    with pytest.raises(UserError, match="no such folder"):
        export_job(JobContext(), new_study.path, tmp_path / "gone" / "x.csv", ratings=False)
    assert every_row(new_study.path) == before
    assert _beside(new_study) == ["items.csv"]
