"""Study-level correlations on a real study file: human-score rule, z-scores, live updates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sqlalchemy import select

from meaningbench.analysis.correlation import correlate
from meaningbench.analysis.live import StudyAnalysis, correlation_table
from meaningbench.db.models import Dimension
from tests.analysis.studybuild import add_items, add_ratings, add_scores


@pytest.fixture
def study(new_study):
    rng = np.random.default_rng(0)
    n = 60
    rows = [(f"source {k // 3}", f"output {k}", f"sys{k % 4}") for k in range(n)]
    ids = add_items(new_study, rows)
    truth = rng.uniform(0, 100, n)
    for name, bias, noise in (("ann", 0, 10), ("bob", 15, 15), ("cy", -10, 20)):
        vals = np.clip(truth + bias + rng.normal(0, noise, n), 0, 100)
        rated = {i: float(v) for i, v in zip(ids, vals, strict=True) if rng.random() < 0.8}
        add_ratings(new_study, name, rated)
    # An aggregate label for every item (as CSMD ships): used only where no human rated.
    add_ratings(new_study, "published-mean", {i: 42.0 for i in ids}, kind="aggregate")
    add_scores(
        new_study,
        "good",
        {i: float(t + rng.normal(0, 10)) for i, t in zip(ids, truth, strict=True)},
    )
    bad = {i: float(v) for i, v in zip(ids, rng.uniform(0, 100, n), strict=True)}
    bad[ids[0]] = None  # a failed item score
    add_scores(new_study, "bad", bad)
    return new_study, ids, truth


def _expected_scores(study, ids) -> pd.DataFrame:
    from meaningbench.db.frames import ratings_frame

    with study.session() as s:
        r = ratings_frame(s, dimension="meaning")
    human = r[r.annotator_kind == "named"].copy()
    g = human.groupby("annotator")["value"]
    human["z"] = (human["value"] - g.transform("mean")) / g.transform("std")
    means = human.groupby("item_id")[["value", "z"]].mean()
    agg = r[r.annotator_kind == "aggregate"].copy()
    agg["z"] = 0.0  # one constant aggregate: SD 0 → 1, so z = 0
    agg_means = agg.groupby("item_id")[["value", "z"]].mean()
    out = means.reindex(ids)
    missing = out["value"].isna()
    out.loc[missing] = agg_means.reindex(ids).loc[missing].to_numpy()
    return out


def test_human_scores_follow_the_documented_rule(study) -> None:
    new_study, ids, _ = study
    analysis = StudyAnalysis.from_study(new_study)
    scores = analysis.data.ratings.scores()
    expected = _expected_scores(new_study, ids)
    np.testing.assert_allclose(scores.raw, expected["value"].to_numpy())
    np.testing.assert_allclose(scores.z, expected["z"].to_numpy(), atol=1e-12)
    assert scores.from_aggregate.any()
    assert (scores.raw[scores.from_aggregate] == 42.0).all()
    assert (scores.raw[~scores.from_aggregate] != 42.0).all()


@pytest.mark.parametrize("z", [False, True])
def test_table_matches_scipy_on_the_same_numbers(study, z: bool) -> None:
    new_study, ids, _ = study
    table = correlation_table(new_study, z=z, n_boot=200, seed=1)
    expected = _expected_scores(new_study, ids)
    y = expected["z" if z else "value"].to_numpy()
    from meaningbench.analysis.score_columns import score_matrix

    with new_study.session() as s:
        matrix = score_matrix(s).reindex(ids)
    assert set(table.results) == {"good", "bad"}
    for name in ("good", "bad"):
        x = matrix[name].to_numpy(dtype=float)
        keep = np.isfinite(x) & np.isfinite(y)
        r = table.results[name]
        assert r.n == keep.sum()
        assert r.pearson == pytest.approx(stats.pearsonr(x[keep], y[keep])[0])
        assert r.spearman == pytest.approx(stats.spearmanr(x[keep], y[keep])[0])
        assert r.kendall == pytest.approx(stats.kendalltau(x[keep], y[keep])[0])
        raw = expected["value"].to_numpy()[keep]
        assert r.r2 == pytest.approx(
            1 - ((raw - x[keep]) ** 2).sum() / ((raw - raw.mean()) ** 2).sum()
        )
        assert r.pearson_ci[0] <= r.pearson <= r.pearson_ci[1]
        if name == "good":  # every item scored: the same units, the same resamples
            same = correlate(x, y, n_boot=200, seed=1, rating_values=expected["value"].to_numpy())
            assert same.pearson_ci == pytest.approx(r.pearson_ci)
    assert table.results["good"].pearson > 0.7 > abs(table.results["bad"].pearson)
    assert np.isfinite(table.results["good"].system_pearson)
    js = table.to_json()
    assert js["dimension"] == "meaning" and js["n"] == len(ids)


def test_source_group_bootstrap(study) -> None:
    new_study, *_ = study
    table = correlation_table(new_study, n_boot=100, groups="sources")
    assert table.unit == "groups"
    items = correlation_table(new_study, n_boot=100, groups="items")
    assert table.results["good"].pearson == items.results["good"].pearson
    assert table.results["good"].pearson_ci != items.results["good"].pearson_ci


def test_live_rating_equals_a_fresh_load(study) -> None:
    new_study, ids, _ = study
    live = StudyAnalysis.from_study(new_study)
    before = live.correlations().results["good"].pearson
    assert live.set_rating(ids[5], "dora", 3.0)
    assert not live.set_rating(10**9, "dora", 3.0)  # not an item of the study
    add_ratings(new_study, "dora", {ids[5]: 3.0})
    fresh = StudyAnalysis.from_study(new_study)
    for z in (False, True):
        a = live.correlations(z=z).to_frame()
        b = fresh.correlations(z=z).to_frame()
        pd.testing.assert_frame_equal(a, b)
    assert live.correlations().results["good"].pearson != before
    assert live.remove_rating(ids[5], "dora")
    assert live.correlations().results["good"].pearson == pytest.approx(before)


def test_live_scores_landing(study) -> None:
    new_study, ids, truth = study
    live = StudyAnalysis.from_study(new_study)
    live.set_scores("new", ids[:30], [float(t) for t in truth[:30]])
    table = live.correlations(columns=["new"])
    assert table.results["new"].n == 30
    live.set_scores("new", ids[30:], [float(t) for t in truth[30:]])
    assert live.correlations().results["new"].n == len(ids)
    scatter = live.scatter("new")
    assert list(scatter.columns) == ["item_id", "metric", "human"] and len(scatter) == len(ids)
    heat = live.metric_correlations()
    assert heat.loc["new", "new"] == pytest.approx(1.0)
    w = live.williams()
    assert np.isnan(w.loc["good", "good"]) and 0 <= w.loc["new", "bad"] <= 1


def test_likert_dimension_is_rescaled_for_r2(new_study) -> None:
    with new_study.session() as s:
        s.add(Dimension(name="likert", scale="likert", min_value=1, max_value=5, position=5))
    ids = add_items(new_study, [(f"s{k}", f"o{k}", None) for k in range(5)])
    add_ratings(new_study, "ann", dict(zip(ids, [1, 2, 3, 4, 5], strict=True)), dimension="likert")
    add_scores(new_study, "m", dict(zip(ids, [0.0, 25.0, 50.0, 75.0, 100.0], strict=True)))
    r = correlation_table(new_study, "likert", n_boot=0).results["m"]
    assert r.r2 == pytest.approx(1.0) and r.rmse == pytest.approx(0.0)
    from meaningbench.errors import UserError

    with pytest.raises(UserError):
        correlation_table(new_study, "no-such-dimension")
    with new_study.session() as s:
        assert s.scalar(select(Dimension.scale).where(Dimension.name == "likert")) == "likert"
