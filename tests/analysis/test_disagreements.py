"""Disagreements between human raters on a real study file: which items are listed (gap
over the threshold, largest first, the 95th percentile by default), with each rater's
rating and spans; machine raters and labels are no raters; a study without two raters on
one item says why."""

from __future__ import annotations

import numpy as np
import pytest

from meaningbench.analysis.disagreements import find_disagreements
from meaningbench.analysis.resolutions import resolve_item
from meaningbench.db.models import Rating, RatingSpan
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from tests.analysis.studybuild import SOURCES, add_items, add_ratings

# Ratings of three raters on 8 items; items 3 and 6 (0-based) split them widely.
RATERS = {
    "ann": [50, 60, 70, 10, 40, 55, 95, 30],
    "bob": [55, 62, 68, 90, 45, 50, 20, 35],
    "cat": [52, 58, 71, 50, 42, 53, 60, 33],
}


def _study(study: Study) -> list[int]:
    ids = add_items(study, [(s, s.split(" ", 1)[1], "sys") for s in SOURCES])
    for rater, values in RATERS.items():
        add_ratings(study, rater, dict(zip(ids, map(float, values), strict=True)))
    return ids


def test_items_over_a_set_threshold_are_listed_largest_gap_first(new_study: Study) -> None:
    ids = _study(new_study)
    with new_study.session() as s:
        found = find_disagreements(s, "meaning", threshold=20)
    assert [d.item_id for d in found.items] == [ids[3], ids[6]]
    assert [d.gap for d in found.items] == [80.0, 75.0]
    assert not found.from_percentile and found.threshold == 20
    first = found.items[0]
    # Each rater's rating, lowest first, beside the item's texts.
    assert [(r.rater, r.value) for r in first.ratings] == [
        ("ann", 10.0),
        ("cat", 50.0),
        ("bob", 90.0),
    ]
    assert first.source == SOURCES[3] and first.system == "sys"
    assert found.n_items_compared == 8 and found.n_pairs == 24


def test_the_default_threshold_is_the_studys_95th_percentile_of_pairwise_gaps(
    new_study: Study,
) -> None:
    _study(new_study)
    gaps = [
        abs(a - b)
        for k in range(8)
        for a, b in [
            (RATERS["ann"][k], RATERS["bob"][k]),
            (RATERS["ann"][k], RATERS["cat"][k]),
            (RATERS["bob"][k], RATERS["cat"][k]),
        ]
    ]
    with new_study.session() as s:
        found = find_disagreements(s)
    assert found.from_percentile
    assert found.threshold == pytest.approx(float(np.percentile(gaps, 95)))
    assert all(d.gap > found.threshold for d in found.items) and found.items
    assert "95th percentile of 24 pairwise gaps between two raters on 8 items" in (
        found.describe_threshold()
    )


def test_machine_raters_and_labels_are_no_raters(new_study: Study) -> None:
    ids = add_items(new_study, [(SOURCES[0], "cat sat", "s"), (SOURCES[1], "markets fell", "s")])
    add_ratings(new_study, "ann", {ids[0]: 10.0, ids[1]: 50.0})
    add_ratings(new_study, "judge", {ids[0]: 95.0, ids[1]: 0.0}, kind="machine")
    add_ratings(new_study, "aggregate:pub", {ids[0]: 90.0}, kind="aggregate")
    with new_study.session() as s, pytest.raises(UserError, match="two human raters"):
        find_disagreements(s, threshold=5)
    add_ratings(new_study, "bob", {ids[0]: 30.0, ids[1]: 52.0})
    with new_study.session() as s:
        found = find_disagreements(s, threshold=5)
    assert [(d.item_id, [r.rater for r in d.ratings]) for d in found.items] == [
        (ids[0], ["ann", "bob"])
    ]


def test_spans_come_with_each_raters_rating(new_study: Study) -> None:
    ids = add_items(new_study, [(SOURCES[6], "The bridge was closed.", "s")])
    add_ratings(new_study, "ann", {ids[0]: 20.0})
    add_ratings(new_study, "bob", {ids[0]: 90.0})
    with new_study.session() as s:
        ann = s.query(Rating).filter(Rating.value == 20.0).one()
        s.add(RatingSpan(rating_id=ann.id, start=4, end=10, severity="major", text="bridge"))
    with new_study.session() as s:
        (item,) = find_disagreements(s, threshold=0).items
    assert [(r.rater, [(sp.text, sp.severity) for sp in r.spans]) for r in item.ratings] == [
        ("ann", [("bridge", "major")]),
        ("bob", []),
    ]


def test_a_settled_item_shows_its_decision(new_study: Study) -> None:
    ids = _study(new_study)
    with new_study.session() as s:
        resolve_item(s, ids[3], "score", score=35.0, note="ann misread")
    with new_study.session() as s:
        found = find_disagreements(s, threshold=20)
    settled = {d.item_id: d.resolution for d in found.items}
    assert settled[ids[6]] is None
    done = settled[ids[3]]
    assert done is not None and (done.decision, done.score, done.note) == (
        "score",
        35.0,
        "ann misread",
    )
    assert found.n_resolved == 1 and found.to_json()["resolved"] == 1


def test_bad_input_says_why(new_study: Study) -> None:
    _study(new_study)
    with new_study.session() as s:
        with pytest.raises(UserError, match="no dimension .nowhere."):
            find_disagreements(s, "nowhere")
        with pytest.raises(UserError, match="a threshold is a gap of 0 or more"):
            find_disagreements(s, threshold=-1)
