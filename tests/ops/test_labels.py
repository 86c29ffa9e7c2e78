"""The label audit's writes through the ops, on a real study: a fixed label set is a new
aggregate source whose labels are the raw raters' means, choosing a set is one study setting,
each names the label set in `StudyChanges.label_sets`, and a refused name writes nothing."""

from __future__ import annotations

import json

import pytest

from meaningbench.analysis.label_sets import SETTING_KEY
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.labels import choose_job, fix_job
from meaningbench.runtime import JobContext
from tests.analysis.studybuild import add_items, add_ratings
from tests.ops.study_rows import every_row, rows

LABELS = (
    "SELECT r.item_id, r.value FROM rating r JOIN annotator a ON a.id = r.annotator_id "
    "WHERE a.name = ? AND a.kind = 'aggregate' ORDER BY r.item_id"
)


def _published_and_raw(study: Study) -> list[int]:
    """Published labels of two outputs, and the raw ratings of the file they came from;
    returns the published items' ids."""
    pub = add_items(study, [("a b c", "a b", None), ("d e f", "d e", None)])
    add_ratings(study, "aggregate:pub", dict(zip(pub, [10.0, 50.0], strict=True)), kind="aggregate")
    raw = add_items(study, [("a b c", "a b", "s1"), ("d e f", "d e", "s1")], dataset="raw")
    for rater, values in (("r1", [80.0, 20.0]), ("r2", [60.0, 30.0])):
        add_ratings(study, rater, dict(zip(raw, values, strict=True)), origin="import:raw.csv")
    return pub


def _chosen(study: Study) -> list[object]:
    found = rows(study.path, "SELECT value FROM study_setting WHERE key = ?", SETTING_KEY)
    return [json.loads(v) if isinstance(v, str) else v for (v,) in found]


def test_a_fixed_label_set_holds_the_raw_means_and_is_chosen(new_study: Study) -> None:
    pub = _published_and_raw(new_study)
    wrote = fix_job(new_study.path, "fixed", keep_unmatched=True, choose=True)(JobContext())
    assert wrote.changes.label_sets == {"fixed"} and not wrote.changes.ratings
    assert wrote.value.name == "fixed" and wrote.value.n_written == 2
    assert rows(new_study.path, LABELS, "fixed") == [(pub[0], 70.0), (pub[1], 25.0)]
    assert rows(new_study.path, LABELS, "aggregate:pub") == [(pub[0], 10.0), (pub[1], 50.0)]
    assert _chosen(new_study) == ["fixed"]

    # Back to the published labels: the setting is cleared, the set stays.
    changes = choose_job(new_study.path, None)(JobContext())
    assert changes.label_sets == {""}
    assert _chosen(new_study) == [None]
    assert choose_job(new_study.path, "fixed")(JobContext()).label_sets == {"fixed"}
    assert _chosen(new_study) == ["fixed"]


def test_a_name_taken_or_unknown_is_refused_and_writes_nothing(new_study: Study) -> None:
    _published_and_raw(new_study)
    before = every_row(new_study.path)
    with pytest.raises(UserError, match="already exists"):
        fix_job(new_study.path, "r1", keep_unmatched=True, choose=True)(JobContext())
    with pytest.raises(UserError, match="no aggregate label set"):
        choose_job(new_study.path, "nowhere")(JobContext())
    assert every_row(new_study.path) == before
