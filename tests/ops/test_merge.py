"""A merge through the op, on real study files: another study's new item and ratings come
in, `StudyChanges.everything` tells every screen to reload, and a merge refused (the study
into itself, a file that is no study) leaves the study as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.db.study import Study, copy_study, open_study
from meaningbench.ops.merge import merge_job
from meaningbench.runtime import JobContext
from tests.analysis.studybuild import add_items, add_ratings
from tests.ops.study_rows import every_row, rows

ROWS = [("a b c d", "a b c", "s1"), ("e f g h", "e f", "s1")]
RATED = (
    "SELECT i.output, r.value FROM rating r JOIN annotator a ON a.id = r.annotator_id "
    "JOIN item i ON i.id = r.item_id WHERE a.name = 'bob' AND r.state = 'current' "
    "ORDER BY i.output"
)


def _other(study: Study) -> Path:
    """A copy of the study with one more item, and bob's ratings of every item in it."""
    path = copy_study(study.path, study.path.parent / "other.mbstudy")
    with open_study(path) as copy:
        add_items(copy, [("i j k l", "i j", "s2")])
        add_ratings(copy, "bob", {i: 60.0 for (i,) in rows(path, "SELECT id FROM item")})
    return path


def test_a_merge_brings_the_other_studys_items_and_ratings(new_study: Study) -> None:
    add_items(new_study, ROWS)
    other = _other(new_study)
    wrote = merge_job(new_study, other)(JobContext())
    assert wrote.changes.everything
    report = wrote.value
    assert (report.items_matched, report.items_added) == (2, 1)
    assert report.annotators_added == ["bob"] and report.ratings_added == 3
    assert rows(new_study.path, RATED) == [("a b c", 60.0), ("e f", 60.0), ("i j", 60.0)]
    # Merged again, nothing is new.
    again = merge_job(new_study, other)(JobContext()).value
    assert (again.items_added, again.ratings_added, again.duplicates) == (0, 0, 3)


def test_a_refused_merge_writes_nothing(new_study: Study, tmp_path: Path) -> None:
    add_items(new_study, ROWS)
    before = every_row(new_study.path)
    with pytest.raises(Exception, match="itself"):
        merge_job(new_study, new_study.path)(JobContext())
    junk = tmp_path / "junk.mbstudy"
    junk.write_bytes(b"not a database" * 100)
    with pytest.raises(Exception):  # noqa: B017 - whichever error names the file
        merge_job(new_study, junk)(JobContext())
    assert every_row(new_study.path) == before
