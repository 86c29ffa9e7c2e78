"""The stopping signal: bootstrap agreement of the cluster ranking with itself, the top
cluster's history over the rating timeline, and the trend of the agreement."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm
from sqlalchemy import select, update

from meaningbench.analysis.metaeval import MetaEvalData
from meaningbench.analysis.metaeval_significance import rank_metrics
from meaningbench.analysis.metaeval_stability import (
    HISTORY,
    MAX_EXTRAPOLATION,
    TREND,
    Checkpoint,
    Snapshot,
    StabilityOptions,
    fit_trend,
    order_tau,
    ranking_stability,
    resample_sources,
)
from meaningbench.analysis.metaeval_study import metaeval_data_from_study, metaeval_snapshots
from meaningbench.db.models import Rating
from meaningbench.db.study import open_study
from tests.analysis.studybuild import add_ratings
from tests.ui.dashboard.studies import synthetic_study

FRACTIONS = sorted(set(HISTORY + TREND))


def _snapshots(noise: tuple[float, ...], n: int = 400, seed: int = 1) -> list[Snapshot]:
    """Outputs rated one rating each in a random order; metric k is the truth plus noise
    of sd noise[k]: the smaller the noise, the better the metric."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    metrics = np.column_stack([truth + rng.normal(scale=s, size=n) for s in noise])
    order = rng.permutation(n)
    names = [f"m{k}" for k in range(len(noise))]
    out = []
    for f in FRACTIONS:
        k = math.ceil(f * n)
        human = np.full(n, np.nan)
        human[order[:k]] = truth[order[:k]]
        data = MetaEvalData(
            human,
            metrics,
            names,
            np.array([None] * n, dtype=object),
            np.array([f"s{i // 2}" for i in range(n)], dtype=object),
        )
        out.append(Snapshot(f, k, data))
    return out


def test_one_metric_clearly_best_is_settled() -> None:
    st = ranking_stability(_snapshots((0.3, 1.0, 1.5)))
    assert st.top == ("m0",)
    assert st.agreement is not None and st.agreement >= 0.95
    assert st.tau is not None and st.tau > 0.9
    assert [p.top for p in st.history] == [("m0",)] * len(HISTORY)
    assert st.unchanged_share == pytest.approx(0.2)
    assert st.settled
    assert st.trend.more == 0
    assert st.sentence().startswith(
        "The top cluster has not changed over the last 20% of ratings; "
    )
    assert f"{st.agreement:.0%} of resamples agree" in st.sentence()
    assert st.trend_sentence() == "Agreement has reached 95%."


def test_two_tied_metrics_are_not_settled() -> None:
    st = ranking_stability(_snapshots((0.7, 0.7, 2.0)))
    assert st.top == ("m0", "m1")
    # The tied pair is split on some resamples and swapped on about half of them.
    assert st.agreement is not None and st.agreement < 0.95
    assert st.first is not None and 0.3 <= st.first <= 0.7
    assert st.tau is not None and st.tau < 0.9
    assert not st.settled
    assert "the same best metric in" in st.sentence()
    assert st.trend.more != 0 and st.trend_sentence() != "Agreement has reached 95%."


def test_the_same_seed_gives_the_same_signal_and_another_seed_other_draws() -> None:
    snaps = _snapshots((0.7, 0.7, 2.0))
    a = ranking_stability(snaps, StabilityOptions(seed=3))
    b = ranking_stability(snaps, StabilityOptions(seed=3))
    c = ranking_stability(snaps, StabilityOptions(seed=4))
    agreements = [p.agreement for p in a.trend_points]
    assert agreements == [p.agreement for p in b.trend_points]
    assert [p.tau for p in a.trend_points] == [p.tau for p in b.trend_points]
    assert a.sentence() == b.sentence() and a.trend_sentence() == b.trend_sentence()
    assert agreements != [p.agreement for p in c.trend_points]


def test_the_history_finds_when_the_top_cluster_last_changed() -> None:
    """Until 90 % of the ratings were in, the humans followed m1; from then on m0."""
    early = _snapshots((1.5, 0.3, 2.0))
    late = _snapshots((0.3, 1.5, 2.0))
    snaps = [e if e.fraction < 0.9 - 1e-9 else lt for e, lt in zip(early, late, strict=True)]
    st = ranking_stability(snaps)
    assert [p.top for p in st.history] == [("m1",), ("m1",), ("m0",), ("m0",), ("m0",)]
    assert st.unchanged_since == pytest.approx(0.9)
    assert st.unchanged_share == pytest.approx(0.1)
    assert not st.settled  # the agreement is high, but the top cluster just changed
    assert "not changed over the last 10% of ratings" in st.sentence()
    # Changed at the very last checkpoint: said as such.
    snaps = [e if e.fraction < 1.0 else lt for e, lt in zip(early, late, strict=True)]
    st = ranking_stability(snaps)
    assert st.unchanged_share == pytest.approx(0.0)
    assert "changed within the last 5% of ratings" in st.sentence()


def test_the_agreement_is_the_share_of_resamples_with_the_same_top_cluster() -> None:
    """Recomputed by hand: the same draws, each resample ranked by the engine."""
    snaps = _snapshots((0.7, 0.8, 2.0), n=120)
    options = StabilityOptions(resamples=12, inner_resamples=50)
    st = ranking_stability(snaps, options)
    data = snaps[-1].data
    current = rank_metrics(data, "pearson", group_by="none", resamples=1000, intervals=False)
    top = {m for m, c in current.clusters.items() if c == 1}
    rng = np.random.default_rng(options.seed)
    work = data.subset(data.common())
    same, taus = 0, []
    for _ in range(options.resamples):
        sample = resample_sources(work, rng)
        r = rank_metrics(sample, "pearson", group_by="none", resamples=50, intervals=False)
        same += {m for m, c in r.clusters.items() if c == 1} == top
        taus.append(order_tau(current.order, r.order))
    assert st.agreement == same / options.resamples
    assert st.tau == pytest.approx(np.mean(taus))


def test_resampling_sources_keeps_their_outputs_together() -> None:
    data = _snapshots((0.5, 1.0), n=40)[-1].data
    sample = resample_sources(data, np.random.default_rng(0))
    assert sample.n == data.n  # two outputs per source, as many sources drawn as there are
    labels, counts = np.unique(sample.sources.astype(str), return_counts=True)
    assert (counts == 2).all() and labels.size == 20
    origin = {str(s).split("\0")[0] for s in sample.sources}
    assert len(origin) < 20  # drawn with replacement: some source twice, some not at all


def test_order_tau() -> None:
    assert order_tau(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert order_tau(["a", "b", "c"], ["c", "b", "a"]) == -1.0
    assert order_tau(["a", "b", "c"], ["b", "a", "c"]) == pytest.approx(1 / 3)
    assert order_tau(["a"], ["a"]) is None


def _points(alpha: float, beta: float, ns: list[int]) -> list[Checkpoint]:
    return [
        Checkpoint(n / ns[-1], n, ("m0",), agreement=float(norm.cdf(alpha + beta * math.sqrt(n))))
        for n in ns
    ]


def test_the_trend_solves_the_probit_line_for_the_target() -> None:
    ns = [200, 240, 280, 320, 360, 400]
    trend = fit_trend(_points(-1.0, 0.1, ns), 400, StabilityOptions(resamples=10_000))
    assert trend.slope == pytest.approx(0.1, rel=1e-6)
    assert trend.intercept == pytest.approx(-1.0, rel=1e-6)
    need = ((norm.ppf(0.95) + 1.0) / 0.1) ** 2
    assert trend.more == math.ceil(need - 400)
    assert trend.since == 0.5 and trend.points == 6


def test_the_trend_says_why_when_it_cannot_tell() -> None:
    opts = StabilityOptions()
    few = fit_trend(_points(-1.0, 0.1, [300, 400]), 400, opts)
    assert few.more is None and "Too few ratings" in (few.reason or "")
    flat = fit_trend(_points(1.0, -0.01, [200, 300, 400]), 400, opts)
    assert flat.more is None and "not grown" in (flat.reason or "")
    far = fit_trend(_points(-3.0, 0.05, [200, 300, 400]), 400, opts)
    assert far.more is None and f"{MAX_EXTRAPOLATION:g} times" in (far.reason or "")
    assert far.target_ratings is not None and far.target_ratings > MAX_EXTRAPOLATION * 400
    assert f"about {far.target_ratings:,} ratings in all" in (far.reason or "")
    # Rising, but by less than the points scatter (QuestEval's meaning ratings gave these).
    ns = [2471, 2965, 3459, 3953, 4447, 4941]
    noisy = [
        Checkpoint(n / ns[-1], n, ("m0",), agreement=a)
        for n, a in zip(ns, [0.225, 0.35, 0.825, 0.625, 0.575, 0.45], strict=True)
    ]
    shaky = fit_trend(noisy, 4941, opts)
    assert shaky.slope is not None and shaky.slope > 0
    assert shaky.slope_t is not None and shaky.slope_t < 2.132  # t(0.95, 4 dof)
    assert shaky.more is None and "not grown clearly" in (shaky.reason or "")


def test_no_ratings_is_too_few_to_tell() -> None:
    snaps = [Snapshot(s.fraction, 0, s.data) for s in _snapshots((0.5, 1.0), n=20)]
    st = ranking_stability(snaps)
    assert st.agreement is None and st.sentence().startswith("No ratings yet")


def test_the_study_timeline_counts_ratings_in_the_order_they_were_given(tmp_path: Path) -> None:
    """Snapshots of a real study file: after a share f of its N ratings, the first
    ceil(f·N) by submitted time (not by id) make the human scores."""
    study, facts = synthetic_study(tmp_path / "t.mbstudy", n_items=40, n_metrics=3, n_raters=1)
    start = datetime(2026, 1, 1)
    with study.session() as s:
        ids = s.scalars(select(Rating.id).order_by(Rating.id)).all()
        # Given in reverse id order: the newest id was rated first.
        for k, rid in enumerate(reversed(ids)):
            when = start + timedelta(minutes=k)
            s.execute(update(Rating).where(Rating.id == rid).values(submitted_at=when))
        rated = {rid: item for rid, item in s.execute(select(Rating.id, Rating.item_id))}
    path = study.path
    study.close()
    with open_study(path) as st:
        snaps = metaeval_snapshots(st, [0.5, 1.0])
        full = metaeval_data_from_study(st)
    n = len(ids)
    assert [s.ratings for s in snaps] == [math.ceil(0.5 * n), n]
    first = {rated[rid] for rid in list(reversed(ids))[: math.ceil(0.5 * n)]}
    half = snaps[0].data
    shown = {facts.item_ids[k] for k in np.flatnonzero(np.isfinite(half.human))}
    assert shown == first
    np.testing.assert_array_equal(snaps[1].data.human, full.human)
    np.testing.assert_array_equal(half.metrics, full.metrics)
    keep = np.isfinite(half.human)
    np.testing.assert_array_equal(half.human[keep], full.human[keep])  # one rating per item


def test_the_timeline_counts_human_ratings_only(tmp_path: Path) -> None:
    """A judge stored as a machine rater adds ratings that are no human's: the signal
    counts the 15 human ratings, not 20, and its human scores are the humans' alone."""
    study, facts = synthetic_study(tmp_path / "m.mbstudy", n_items=15, n_metrics=3, n_raters=1)
    add_ratings(study, "judge", {i: 50.0 for i in facts.item_ids[:5]}, kind="machine")
    path = study.path
    study.close()
    with open_study(path) as st:
        snaps = metaeval_snapshots(st, [0.6, 1.0])
        full = metaeval_data_from_study(st)
    assert [s.ratings for s in snaps] == [9, 15]
    np.testing.assert_array_equal(snaps[1].data.human, full.human)
    assert np.isfinite(snaps[0].data.human).sum() == 9
    st2 = ranking_stability(snaps, StabilityOptions(resamples=5, inner_resamples=10))
    assert st2.ratings == 15
