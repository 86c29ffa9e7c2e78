"""The dashboard's in-memory ratings follow the one rule, also as ratings land one by one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select, update

from meaningbench.analysis.human import item_scores
from meaningbench.analysis.live import StudyAnalysis
from meaningbench.datasets.importer import import_file
from meaningbench.db.frames import ratings_frame
from meaningbench.db.models import Rating
from meaningbench.queries.dashboard import apply_rating_changes
from tests.analysis.studybuild import add_ratings
from tests.datasets.helpers import write

NAMED = (
    "source,output,system,annotator,meaning\nS1.,O1.,a,r1,90\nS1.,O1.,a,r1,30\nS1.,O1.,a,r2,80\n"
)
ANON = "source,output,system,aspect,rating\nS1.,O1.,a,meaning,10\nS2.,O2.,a,meaning,40\n" \
       "S2.,O2.,a,meaning,40\nS2.,O2.,a,meaning,70\n"  # fmt: skip


def _by_rule(study) -> dict[int, float]:
    with study.session() as s:
        scores = item_scores(ratings_frame(s, dimension="meaning", kinds=("regular",)))
    return dict(zip(scores["item_id"], scores["score"], strict=True))


def _live(analysis: StudyAnalysis) -> dict[int, float]:
    raw, _ = analysis.human()
    ids = analysis.data.item_ids
    return {int(i): float(v) for i, v in zip(ids, raw, strict=True) if np.isfinite(v)}


def test_live_scores_follow_the_rule_through_changes(new_study, tmp_path: Path) -> None:
    import_file(new_study, write(tmp_path / "n.csv", NAMED), dataset="d")
    import_file(new_study, write(tmp_path / "a.csv", ANON), dataset="d")
    live = StudyAnalysis.from_study(new_study)
    expected = _by_rule(new_study)
    assert _live(live) == pytest.approx(expected)
    # S1/O1: r1's 90 and 30 are one rater's 60; with r2's 80 and one anonymous 10: 50.
    # S2/O2: three anonymous raters, two of whom agreed: 50.
    assert sorted(expected.values()) == pytest.approx([50.0, 50.0])

    with new_study.session() as s:
        first = s.scalar(select(Rating).order_by(Rating.id).limit(1))
        assert first is not None
        item = first.item_id
        # r1 revises the 90: the old row is superseded, a new one written.
        s.execute(update(Rating).where(Rating.id == first.id).values(state="superseded"))
        s.add(
            Rating(item_id=item, annotator_id=first.annotator_id,
                   dimension_id=first.dimension_id, value=50.0, supersedes_id=first.id)
        )  # fmt: skip
    add_ratings(new_study, "dora", {item: 20.0})
    changed = apply_rating_changes(live, new_study, [item])
    assert changed == 3  # one withdrawn, two added
    assert _live(live) == pytest.approx(_by_rule(new_study))
    fresh = StudyAnalysis.from_study(new_study)
    assert _live(fresh) == pytest.approx(_live(live))
    assert (
        live.data.ratings.scores().n_raters.tolist()
        == fresh.data.ratings.scores().n_raters.tolist()
    )
    # Nothing changed: reconciling again is a no-op.
    assert apply_rating_changes(live, new_study, [item]) == 0


def test_z_scores_leave_anonymous_ratings_out(new_study, tmp_path: Path) -> None:
    import_file(new_study, write(tmp_path / "a.csv", ANON), dataset="d")
    live = StudyAnalysis.from_study(new_study)
    raw, _ = live.human()
    z, _ = live.human(z=True)
    assert np.isfinite(raw).all() and not np.isfinite(z).any()


def test_rating_set_scores_equal_the_rule_on_a_table_after_live_changes() -> None:
    """`RatingSet` skips the grouping while no rater has two ratings of an item; whatever
    path it takes, its scores are `item_scores` of the same ratings."""
    import pandas as pd

    from meaningbench.analysis.human import RatingSet

    rng = np.random.default_rng(7)
    ids = np.arange(1, 41)
    frame = pd.DataFrame(
        {
            "rating_id": np.arange(60),
            "item_id": rng.choice(ids, 60),
            "annotator": [f"r{k % 3}" for k in range(60)],
            "annotator_kind": "named",
            "value": rng.uniform(0, 100, 60),
        }
    ).drop_duplicates(["item_id", "annotator"])
    anon = pd.DataFrame(
        {
            "rating_id": np.arange(100, 130),
            "item_id": rng.choice(ids, 30),
            "annotator": "anonymous:d",
            "annotator_kind": "anonymous",
            "value": rng.integers(0, 5, 30) * 25.0,
        }
    )
    table = pd.concat([frame, anon], ignore_index=True)
    rs = RatingSet.from_frame(table, ids)
    assert rs._distinct  # no named repeats yet: the fast path

    def check() -> None:
        items, raters, values = rs.arrays()
        names = np.array(rs.annotators)[raters]
        kinds = np.array(["named", "anonymous", "aggregate"])[rs.annotator_kinds()[raters]]
        oracle = item_scores(
            pd.DataFrame(
                {
                    "item_id": ids[items],
                    "annotator": names,
                    "annotator_kind": kinds,
                    "value": values,
                }  # fmt: skip
            )
        ).set_index("item_id")
        got = rs.scores()
        for i, score, n in zip(got.item_ids, got.raw, got.n_raters, strict=True):
            if np.isfinite(score):
                assert score == pytest.approx(oracle.loc[i, "score"], abs=1e-12)
                assert n == oracle.loc[i, "n_raters"]
            else:
                assert i not in oracle.index

    check()
    rs.set(int(ids[0]), "r9", 40.0)  # a new rater: still distinct
    assert rs._distinct
    check()
    rated = int(frame["item_id"].iloc[0])
    rs.set(rated, str(frame["annotator"].iloc[0]), 3.0, rating_id=999)  # a second rating
    assert not rs._distinct
    check()
    rs.discard(999)
    check()
