"""The lead's decisions on disagreements, on a real study file: stored as their own label set
(never over the ratings), read only when that set is picked, and then an exclusion drops
the item, an adjudicated score replaces the raters' mean and "keep all" keeps it."""

from __future__ import annotations

import pytest

from meaningbench.analysis.data import load_study_data
from meaningbench.analysis.human import item_scores
from meaningbench.analysis.label_sets import label_sets, resolve_label_sets, select_labels
from meaningbench.analysis.resolutions import current_resolutions, resolve_item
from meaningbench.db.frames import ratings_frame
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from tests.analysis.studybuild import SOURCES, add_items, add_ratings
from tests.ops.study_rows import every_row, rows

RATINGS_OF_RATERS = (
    "SELECT r.item_id, a.name, r.value, r.state FROM rating r "
    "JOIN annotator a ON a.id = r.annotator_id WHERE a.kind = 'named' ORDER BY r.id"
)


def _study(study: Study) -> list[int]:
    ids = add_items(study, [(s, s.split(" ", 1)[1], "sys") for s in SOURCES[:4]])
    add_ratings(study, "ann", dict(zip(ids, [10.0, 40.0, 60.0, 80.0], strict=True)))
    add_ratings(study, "bob", dict(zip(ids, [90.0, 50.0, 20.0, 82.0], strict=True)))
    # An item nobody rated, with only its published label.
    (lone,) = add_items(study, [(SOURCES[5], "Children learn.", "sys")])
    add_ratings(study, "aggregate:pub", {lone: 33.0, ids[0]: 70.0}, kind="aggregate")
    return [*ids, lone]


def _scores(study: Study, labels: str | None) -> dict[int, float]:
    with study.session() as s:
        frame = ratings_frame(s, dimension="meaning", kinds=("regular",))
        kept = select_labels(frame, resolve_label_sets(s, labels))
    scores = item_scores(kept)
    return {int(i): float(v) for i, v in zip(scores["item_id"], scores["score"], strict=True)}


def _settle_three(study: Study, ids: list[int]) -> None:
    with study.session(write=True) as s:
        resolve_item(s, ids[0], "score", score=25.0)
        resolve_item(s, ids[1], "keep-all")
        resolve_item(s, ids[2], "exclude", note="source garbled")


def test_decisions_are_a_label_set_and_the_ratings_stay(new_study: Study) -> None:
    ids = _study(new_study)
    before = rows(new_study.path, RATINGS_OF_RATERS)
    _settle_three(new_study, ids)
    assert rows(new_study.path, RATINGS_OF_RATERS) == before
    with new_study.session() as s:
        sets = {x.name: x for x in label_sets(s)}
        assert sets["resolved"].resolution and sets["resolved"].n_labels == 3
        assert not sets["aggregate:pub"].resolution
        settled = current_resolutions(s, "meaning")
    assert {i: r.decision for i, r in settled.items()} == {
        ids[0]: "score",
        ids[1]: "keep-all",
        ids[2]: "exclude",
    }
    assert settled[ids[1]].raters_mean == 45.0 and settled[ids[2]].note == "source garbled"


def test_analyses_read_the_decisions_only_when_the_set_is_picked(new_study: Study) -> None:
    ids = _study(new_study)
    plain = _scores(new_study, None)
    _settle_three(new_study, ids)
    assert _scores(new_study, None) == plain  # not picked: nothing changes
    with new_study.session() as s:
        assert resolve_label_sets(s) == ["aggregate:pub"]
        assert resolve_label_sets(s, "resolved") == ["resolved", "aggregate:pub"]
    settled = _scores(new_study, "resolved")
    assert settled == {
        ids[0]: 25.0,  # adjudicated, not the raters' 50 nor the published 70
        ids[1]: 45.0,  # keep all: the raters' mean
        ids[3]: 81.0,  # not settled
        ids[4]: 33.0,  # nobody rated it: its published label still stands
    }  # ids[2] is excluded
    data = load_study_data(new_study, "meaning", labels="resolved")
    scores = data.ratings.scores()
    by_item = dict(zip(data.item_ids.tolist(), scores.raw.tolist(), strict=True))
    assert by_item[ids[0]] == 25.0 and by_item[ids[1]] == 45.0
    assert by_item[ids[2]] != by_item[ids[2]]  # NaN: no score, left out


def test_settling_again_supersedes_the_earlier_decision(new_study: Study) -> None:
    ids = _study(new_study)
    with new_study.session(write=True) as s:
        resolve_item(s, ids[0], "exclude")
    with new_study.session(write=True) as s:
        resolve_item(s, ids[0], "score", score=30.0)
    states = rows(
        new_study.path,
        "SELECT r.origin, r.state, r.supersedes_id IS NOT NULL FROM rating r "
        "JOIN annotator a ON a.id = r.annotator_id WHERE a.name = 'resolved' ORDER BY r.id",
    )
    assert states == [
        ("resolution:exclude", "superseded", 0),
        ("resolution:score", "current", 1),
    ]
    assert _scores(new_study, "resolved")[ids[0]] == 30.0


def test_bad_decisions_are_refused_and_write_nothing(new_study: Study) -> None:
    ids = _study(new_study)
    before = every_row(new_study.path)
    cases = [
        (dict(item_id=ids[0], decision="score"), "adjudicated score is given"),
        (dict(item_id=ids[0], decision="exclude", score=3.0), "adjudicated score is given"),
        (dict(item_id=ids[0], decision="score", score=140.0), "off the meaning scale"),
        (dict(item_id=ids[4], decision="keep-all"), "0 human rater"),
        (dict(item_id=999, decision="exclude"), "no item 999"),
        (dict(item_id=ids[0], decision="drop"), "unknown decision"),
        (dict(item_id=ids[0], decision="exclude", label_set="ann"), "not a resolution set"),
        (dict(item_id=ids[0], decision="exclude", dimension="nowhere"), "no dimension"),
    ]
    for kwargs, message in cases:
        with new_study.session(write=True) as s, pytest.raises(UserError, match=message):
            resolve_item(s, **kwargs)  # type: ignore[arg-type]
    assert every_row(new_study.path) == before


def test_the_audit_leaves_the_decisions_out(new_study: Study) -> None:
    from meaningbench.analysis.audit import audit_study

    ids = _study(new_study)
    _settle_three(new_study, ids)
    with new_study.session() as s:
        result = audit_study(s, raters=["ann", "bob"])
    audited = set(result.unmatched) | set(result.labels["label_set"].astype(str))
    assert audited == {"aggregate:pub"}
