"""Settling a disagreement through the op, on a real study: the decision is a label of the
resolution set, the raters' ratings stay, the changes name the set, and a refused decision
writes nothing."""

from __future__ import annotations

import pytest

from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.disagreements import resolve_job
from meaningbench.runtime import JobContext
from tests.analysis.studybuild import SOURCES, add_items, add_ratings
from tests.ops.study_rows import every_row, rows

DECISIONS = (
    "SELECT r.item_id, r.value, r.origin, r.n_raters, r.comment FROM rating r "
    "JOIN annotator a ON a.id = r.annotator_id "
    "WHERE a.name = ? AND a.kind = 'aggregate' AND r.state = 'current' ORDER BY r.item_id"
)


def _two_raters(study: Study) -> list[int]:
    ids = add_items(study, [(SOURCES[0], "The cat sat.", "s"), (SOURCES[1], "Stocks fell.", "s")])
    add_ratings(study, "ann", {ids[0]: 10.0, ids[1]: 70.0})
    add_ratings(study, "bob", {ids[0]: 90.0, ids[1]: 20.0})
    return ids


def test_a_decision_is_written_to_the_resolution_set(new_study: Study) -> None:
    ids = _two_raters(new_study)
    raters_before = rows(new_study.path, "SELECT * FROM rating ORDER BY id")
    wrote = resolve_job(new_study.path, ids[0], "score", score=40.0, note="bob saw the typo")(
        JobContext()
    )
    assert wrote.changes.label_sets == {"resolved"} and not wrote.changes.ratings
    assert wrote.value.decision == "score" and "adjudicated score 40" in wrote.value.describe()
    resolve_job(new_study.path, ids[1], "exclude", label_set="round 2")(JobContext())
    assert rows(new_study.path, DECISIONS, "resolved") == [
        (ids[0], 40.0, "resolution:score", 2, "bob saw the typo")
    ]
    assert rows(new_study.path, DECISIONS, "round 2") == [
        (ids[1], 45.0, "resolution:exclude", 2, None)
    ]
    # The raters' rows are the same rows as before.
    after = rows(new_study.path, "SELECT * FROM rating ORDER BY id")
    assert after[: len(raters_before)] == raters_before


def test_a_refused_decision_writes_nothing(new_study: Study) -> None:
    ids = _two_raters(new_study)
    before = every_row(new_study.path)
    with pytest.raises(UserError, match="adjudicated score is given"):
        resolve_job(new_study.path, ids[0], "score")(JobContext())
    with pytest.raises(UserError, match="not a resolution set"):
        resolve_job(new_study.path, ids[0], "keep-all", label_set="bob")(JobContext())
    assert every_row(new_study.path) == before
