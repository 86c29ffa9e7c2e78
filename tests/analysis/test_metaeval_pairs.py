"""MTME's pairwise permutation test (`PairwisePermutationSigDiff`): the fixture of issue 43
(5 systems × 12 items, values and p-value from MTME's own code), an independent
MTME-shaped oracle side by side, early stopping, and the measures it refuses.

The oracle below is written for this test from the algorithm MTME publishes
(google-research/mt-metrics-eval, mt_metrics_eval/stats.py, PairwisePermutationSigDiff
with PairwiseDiffs and KendallVariants): per item, an S × S matrix of each metric's
pairwise differences with its ties (|Δ| ≤ ε) set to 0, a symmetric 0/1 matrix of swaps
per draw, the hybrid matrices, the Kendall variant per item, averaged over items. It
shares no code with the product and draws its own random numbers, so the two agree in
distribution (within Monte-Carlo error), not draw for draw.
"""

from __future__ import annotations

import numpy as np
import pytest

from meaningbench.analysis import metaeval_measures as mm
from meaningbench.analysis import metaeval_pairs as mp
from meaningbench.analysis import metaeval_significance as sig
from meaningbench.analysis.metaeval import MetaEvalData, evaluate
from meaningbench.errors import UserError

HUMAN = [
    [35, 50, 70, 45, 40, 55, 55, 50, 35, 50, 60, 30],
    [45, 25, 35, 25, 50, 35, 55, 55, 50, 15, 45, 50],
    [50, 25, 40, 35, 35, 65, 35, 45, 60, 40, 45, 50],
    [45, 25, 45, 60, 20, 55, 45, 30, 70, 55, 25, 45],
    [55, 45, 55, 45, 55, 65, 35, 50, 40, 50, 30, 35],
]
METRIC1 = [
    [-1.1, 0.6, 2.0, -1.3, -1.1, 0.9, -0.8, -0.2, -1.0, 0.7, 1.1, -1.5],
    [-0.5, -1.9, -0.2, -1.9, -0.2, -0.9, 0.4, 0.2, -0.7, -2.3, -0.6, 0.8],
    [0.3, -1.7, -0.2, -1.3, -0.3, 0.9, -0.6, -1.0, 0.9, -1.8, -1.5, -0.2],
    [-1.0, -1.7, 0.9, 0.3, -2.5, 0.4, -0.1, -1.3, 1.3, 0.6, -1.4, -1.1],
    [0.3, -0.4, -0.2, -0.2, -0.1, 1.7, -0.8, 0.0, -1.1, -0.2, -2.7, -1.5],
]
METRIC2 = [
    [-0.56, -2.49, 2.36, -2.59, 0.29, -0.52, 1.29, 0.26, -2.77, 1.47, 2.43, -1.42],
    [-0.61, -1.91, -2.28, -0.34, -0.71, -1.15, -0.5, -0.42, -1.54, -0.83, -0.54, 1.29],
    [-0.04, -2.53, -1.03, -1.82, -0.96, 0.45, -1.33, -1.85, -0.25, 1.24, -1.08, -1.32],
    [-0.07, -0.07, -2.2, 0.57, -2.84, -1.79, 0.47, -1.2, 1.55, -0.67, -1.19, -1.11],
    [0.13, -1.79, -1.05, 1.26, -0.21, 1.52, -0.99, -0.6, -1.35, 0.61, -1.82, -1.03],
]


def _fixture() -> MetaEvalData:
    s, n = np.shape(HUMAN)
    return MetaEvalData(
        np.asarray(HUMAN, float).ravel(),
        np.column_stack([np.ravel(METRIC1), np.ravel(METRIC2)]),
        ["metric1", "metric2"],
        np.repeat([f"sys{k}" for k in range(s)], n).astype(object),
        np.tile([f"item{j:02d}" for j in range(n)], s).astype(object),
    )


def _mtme_shaped_oracle(
    gold: np.ndarray,
    m1: np.ndarray,
    m2: np.ndarray,
    eps: tuple[float, float],
    variant: str,
    k: int,
    seed: int,
) -> float:
    """p-value of "metric 1 is better than metric 2", by item, as MTME computes it."""
    rng = np.random.default_rng(seed)
    s, n = gold.shape
    upper = np.triu(np.ones((s, s), bool), 1)

    def diffs(v: np.ndarray, e: float) -> tuple[np.ndarray, np.ndarray]:
        d = v[None, :] - v[:, None]
        tie = np.abs(d) <= e
        return np.where(tie, 0.0, d), tie

    def variant_value(xd: np.ndarray, xt: np.ndarray, yd: np.ndarray, yt: np.ndarray):
        con = (((xd > 0) & (yd > 0)) | ((xd < 0) & (yd < 0)))[..., upper].sum(-1)
        t_x = (xt & ~yt)[..., upper].sum(-1)
        t_y = (~xt & yt)[..., upper].sum(-1)
        t_xy = (xt & yt)[..., upper].sum(-1)
        tot = upper.sum()
        dis = tot - con - t_x - t_y - t_xy
        with np.errstate(invalid="ignore", divide="ignore"):
            if variant == "acc23":
                return (con + t_xy) / tot
            if variant == "23":
                return (con + t_xy - dis - t_x - t_y) / tot
            return np.where(
                (t_x + t_xy == tot) | (t_y + t_xy == tot),
                np.nan,
                (con - dis) / np.sqrt((tot - t_x - t_xy) * (tot - t_y - t_xy)),
            )

    per_item1 = np.empty((k, n))
    per_item2 = np.empty((k, n))
    obs1, obs2 = np.empty(n), np.empty(n)
    for j in range(n):
        yd = gold[None, :, j] - gold[:, None, j]
        yt = yd == 0
        d1, t1 = diffs(m1[:, j], eps[0])
        d2, t2 = diffs(m2[:, j], eps[1])
        obs1[j] = variant_value(d1, t1, yd, yt)
        obs2[j] = variant_value(d2, t2, yd, yt)
        w = np.triu(rng.integers(0, 2, (k, s, s)), 1)
        w = (w + np.swapaxes(w, 1, 2)).astype(bool)  # True: keep each metric's own outcome
        h1d, h1t = np.where(w, d1, d2), np.where(w, t1, t2)
        h2d, h2t = np.where(w, d2, d1), np.where(w, t2, t1)
        per_item1[:, j] = variant_value(h1d, h1t, yd, yt)
        per_item2[:, j] = variant_value(h2d, h2t, yd, yt)
    delta = np.nanmean(obs1) - np.nanmean(obs2)
    return float(np.mean(np.nanmean(per_item1, 1) - np.nanmean(per_item2, 1) >= delta - 1e-12))


def test_issue_fixture_values_and_pvalue_at_twenty_thousand_draws() -> None:
    data = _fixture()
    star = evaluate(data, ["acc_eq_star"], group_by="item")
    assert star.get("acc_eq_star", "metric1").value == pytest.approx(0.766666667)
    assert star.get("acc_eq_star", "metric2").value == pytest.approx(0.675)
    assert star.get("acc_eq_star", "metric1").details["epsilon"] == 0.0
    assert star.get("acc_eq_star", "metric2").details["epsilon"] == 0.0
    ranking = sig.rank_metrics(
        data, "acc_eq_star", group_by="item", test="pairs", resamples=20_000, intervals=False
    )
    p = ranking.p_values.loc["metric1", "metric2"]
    assert p == pytest.approx(0.0454, abs=0.005)
    # The two directions come from the same draws: a draw equal to the observed
    # difference counts in both.
    assert 1.0 <= p + ranking.p_values.loc["metric2", "metric1"] <= 1.05
    assert ranking.draws is not None and ranking.draws.loc["metric1", "metric2"] == 20_000


@pytest.mark.parametrize(
    ("measure", "variant"), [("acc_eq_star", "acc23"), ("kendall_b", "b"), ("tau_23", "23")]
)
def test_pvalues_side_by_side_with_an_mtme_shaped_oracle(measure: str, variant: str) -> None:
    data = _fixture()
    k = 20_000
    ours = sig.rank_metrics(
        data, measure, group_by="item", test="pairs", resamples=k, seed=1, intervals=False
    ).p_values.loc["metric1", "metric2"]
    oracle = _mtme_shaped_oracle(
        np.asarray(HUMAN, float),
        np.asarray(METRIC1),
        np.asarray(METRIC2),
        (0.0, 0.0),
        variant,
        k,
        seed=7,
    )
    se = np.sqrt(max(oracle * (1 - oracle), 0.01) * 2 / k)
    assert abs(ours - oracle) <= 4 * se, (ours, oracle)


def test_each_metric_keeps_its_own_epsilon_and_the_tables_give_evaluates_values() -> None:
    rng = np.random.default_rng(5)
    s, n = 6, 15
    h = rng.integers(1, 6, s * n).astype(float)
    x = np.column_stack([np.round(h + rng.normal(0, sd, s * n), 1) for sd in (0.5, 1.0, 3.0)])
    data = MetaEvalData(
        h,
        x,
        ["a", "b", "c"],
        np.repeat([f"s{k}" for k in range(s)], n).astype(object),
        np.tile([f"i{j}" for j in range(n)], s).astype(object),
    )
    for group_by in ("none", "item", "per-system", "system"):
        for measure in mp.PAIRS_MEASURES:
            table = evaluate(data, [measure], group_by=group_by)
            eps = np.array([table.get(measure, m).details.get("epsilon", 0.0) for m in "abc"])
            if measure == "acc_eq_star":
                assert eps.max() > 0  # the noisier metrics tie at their own ε
            result = sig.pairs_test(data, measure, group_by, eps, 10, 0)
            expected = [table.get(measure, m).value for m in "abc"]
            assert result.observed == pytest.approx(expected), (group_by, measure)


def test_early_stopping_stops_as_mtme_and_sees_the_first_draws_of_the_full_run() -> None:
    data = _fixture()
    eps = np.zeros(2)
    full = sig.pairs_test(data, "acc_eq_star", "item", eps, 5_000, 3)
    early = sig.pairs_test(data, "acc_eq_star", "item", eps, 5_000, 3, mp.EarlyStop())
    used = int(early.draws[0, 1])
    assert used % 100 == 0 and used <= 5_000
    if used < 5_000:
        p = early.p_values[0, 1]
        assert p < 0.02 or p > 0.5
    prefix = sig.pairs_test(data, "acc_eq_star", "item", eps, used, 3)
    assert early.p_values[0, 1] == prefix.p_values[0, 1]
    assert full.draws[0, 1] == 5_000
    # Two equal metrics: p near ½ stops at once (the block's last draw reaches 0 half the time).
    twin = MetaEvalData(
        data.human,
        np.column_stack([data.metrics[:, 0], data.metrics[:, 0]]),
        ["x", "y"],
        data.systems,
        data.sources,
    )
    same = sig.pairs_test(twin, "acc_eq", "item", eps, 1_000, 0, mp.EarlyStop())
    assert same.draws[0, 1] == 100 and same.p_values[0, 1] == 1.0


@pytest.mark.parametrize("measure", ["acc_eq", "acc_eq_star", "tau_a", "tau_23"])
@pytest.mark.parametrize("early", [False, True])
def test_linear_measures_count_each_metrics_weighted_sum_as_the_hybrids_values_do(
    measure: str, early: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The linear shortcut (a pair's difference as two metrics' weighted sums) gives the same
    p-values and draws as the hybrids' own values, on groups of unequal size, a lone output
    (a group without pairs), ties and early stopping."""
    rng = np.random.default_rng(4)
    sizes = [5, 3, 1, 6, 2, 4]
    codes = np.repeat(np.arange(len(sizes)), sizes)
    h = np.round(rng.normal(size=codes.size) * 2)
    x = np.column_stack([h + rng.normal(0, s, codes.size) for s in (0.5, 1.0, 1.5, 3.0)])
    x[:, 1] = np.round(x[:, 1])
    groups = mm.Groups.of(codes)
    stop = mp.EarlyStop() if early else None

    def run() -> mp.PairsResult:
        tables = mp.pair_tables(h, x, groups, measure, np.array([0.0, 0.5, 0.0, 0.2]))
        return mp.pairs_pvalues(tables, 1_000, 7, stop)

    fast = run()
    monkeypatch.setattr(mp.PairTables, "linear_weights", lambda self: None)
    slow = run()
    assert np.array_equal(fast.draws, slow.draws)
    assert np.array_equal(fast.p_values, slow.p_values, equal_nan=True)
    assert np.isfinite(fast.p_values[~np.eye(4, dtype=bool)]).all()


def test_tau_c_and_non_pairwise_measures_are_refused_with_the_reason() -> None:
    data = _fixture()
    with pytest.raises(UserError, match="distinct scores"):
        sig.rank_metrics(data, "kendall_c", group_by="item", test="pairs")
    with pytest.raises(UserError, match="pearson is not a count of outcomes of pairs"):
        sig.rank_metrics(data, "pearson", group_by="item", test="pairs")
    with pytest.raises(UserError, match="early stopping is part of the pairs test and of SPA"):
        sig.rank_metrics(data, "acc_eq", group_by="item", early_stop=mp.EarlyStop())


def test_pair_tables_need_no_pairs_of_a_lone_output() -> None:
    g = mm.Groups.of(np.array([0, 0, 1]))
    t = mp.pair_tables(
        np.array([1.0, 2.0, 3.0]), np.array([[1.0], [3.0], [0.0]]), g, "acc_eq", np.zeros(1)
    )
    assert t.pairs.tolist() == [1, 0]
    assert t.values(t.metric_sums(t.sums(), 0)) == pytest.approx(1.0)


def test_perm_outputs_swaps_each_output_on_its_own_as_a_plain_loop_does() -> None:
    from meaningbench.analysis import metaeval_measures as mm

    data = _fixture()
    r = 300
    ranking = sig.rank_metrics(
        data, "pearson", group_by="item", test="perm-outputs", resamples=r, seed=5,
        intervals=False,
    )  # fmt: skip
    z = sig._standardise(data.metrics)
    swap = np.random.default_rng(5).random((r, data.n)) > 0.5  # the test's draw
    groups = mm.Groups.of(data.source_codes())
    obs = mm.pearson(data.human, z.T, groups)
    hits = 0
    for row in swap:
        a = np.where(row, z[:, 1], z[:, 0])
        b = np.where(row, z[:, 0], z[:, 1])
        d = mm.pearson(data.human, np.stack([a, b]), groups)
        hits += d[0] - d[1] >= obs[0] - obs[1] - 1e-9 * max(1.0, abs(obs[0] - obs[1]))
    assert ranking.p_values.loc["metric1", "metric2"] == pytest.approx(hits / r)
    with pytest.raises(UserError, match="perm-outputs swaps outputs one by one"):
        sig.rank_metrics(data, "pearson", group_by="system", test="perm-outputs")
