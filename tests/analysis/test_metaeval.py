"""Meta-evaluation measures against published values (MTME's own tests), scipy and
nlpstats as oracles, a hand-worked tau-like, the cluster rule and the "not defined" cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from meaningbench.analysis import metaeval_measures as mm
from meaningbench.analysis import metaeval_significance as sig
from meaningbench.analysis.metaeval import MetaEvalData, evaluate, small_n_warning, units_of
from meaningbench.errors import UserError

GOLD5 = np.array([1, 2, 2, 3, 4.0])
METRIC5 = np.array([2, 1, 1.5, 5, 3.0])


def _data(h, x, systems, sources, **kw) -> MetaEvalData:
    x = np.asarray(x, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    names = [f"m{k}" for k in range(x.shape[1])]
    return MetaEvalData(
        np.asarray(h, float),
        x,
        names,
        np.asarray(systems, object),
        np.asarray(sources, object),
        **kw,
    )


def _one(data: MetaEvalData, measure: str, group_by: str = "none", **kw) -> float | None:
    return evaluate(data, [measure], group_by=group_by, **kw).get(measure, "m0").value


def test_tau_variants_and_pairwise_accuracy_match_mtme_published_values() -> None:
    d = _data(GOLD5, METRIC5, ["s"] * 5, ["a", "b", "c", "d", "e"])
    assert _one(d, "kendall_b") == pytest.approx(0.316227766)
    assert _one(d, "kendall_c") == pytest.approx(0.32)
    assert _one(d, "tau_23") == pytest.approx(0.2)
    assert _one(d, "acc_eq") == pytest.approx(0.6)
    g = mm.Groups.single(5)
    assert mm.acc_eq(GOLD5, METRIC5, g, epsilon=2.0)[0] == pytest.approx(0.4)
    star = evaluate(d, ["acc_eq_star"], group_by="none").get("acc_eq_star", "m0")
    assert star.value == pytest.approx(0.7)
    assert star.details["epsilon"] == pytest.approx(0.5)
    assert star.details["epsilon_candidates"] >= 2


def test_scipy_is_the_oracle_for_tau_b_and_tau_c_with_ties() -> None:
    rng = np.random.default_rng(3)
    h = rng.integers(0, 6, 40).astype(float)
    x = np.round(rng.normal(size=(3, 40)), 1)
    g = mm.Groups.single(40)
    for row in range(3):
        assert mm.kendall_b(h, x[row], g)[0] == pytest.approx(stats.kendalltau(h, x[row]).statistic)
        assert mm.kendall_c(h, x[row], g)[0] == pytest.approx(
            stats.kendalltau(h, x[row], variant="c").statistic
        )
        assert mm.spearman(h, x[row], g)[0] == pytest.approx(stats.spearmanr(h, x[row]).statistic)


def test_groupings_match_mtme_two_systems_three_items() -> None:
    # MTME packs systems as rows: system A = items 1..3, system B = items 4..6.
    d = _data(np.arange(1, 7.0), [2, 1, 4, 3, 3, 7], list("AAABBB"), list("xyzxyz"))
    assert _one(d, "pearson", "none") == pytest.approx(0.776, abs=5e-4)
    assert _one(d, "pearson", "per-system") == pytest.approx(0.760, abs=5e-4)
    assert _one(d, "pearson", "item") == pytest.approx(1.0)
    assert _one(d, "pdp", "item") == pytest.approx(0.926, abs=5e-4)
    assert _one(d, "kendall_b", "none") == pytest.approx(0.552, abs=5e-4)
    assert _one(d, "kendall_b", "per-system") == pytest.approx(0.575, abs=5e-4)
    # System level: MTME reads 1.0 for the correlation of two systems' means, 2 points,
    # whatever the metric; it is no figure.
    two = evaluate(d, ["pearson"], group_by="system").get("pearson", "m0")
    assert two.value is None and two.reason == "not defined: 2 systems"


def test_spa_reproduces_the_published_value_and_exact_enumeration() -> None:
    gold = np.array([1, 2, 3, 2, 3, 4.0]).reshape(2, 3)
    metric = np.array([2, 2, 4, 1, 3, 5.0]).reshape(2, 3)
    assert mm.spa(gold, metric, mm.permutation_signs(4, 1000, 3)) == pytest.approx(0.872)
    every = np.array(list(itertools.product([-1.0, 1.0], repeat=3)))
    exact = mm.spa(gold, metric, every)
    assert exact == pytest.approx(0.875)  # p_human = 1, p_metric = 7/8
    other = mm.spa(gold, metric, mm.permutation_signs(11, 1000, 3))
    assert abs(other - exact) < 4 * np.sqrt(0.875 * 0.125 / 1000)
    d = _data(gold.ravel(), metric.ravel(), list("AAABBB"), list("xyzxyz"))
    assert evaluate(d, ["spa"], seed=4).get("spa", "m0").value == pytest.approx(0.872)


def _tau_like_case() -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    nan = np.nan
    raters = np.array(
        [
            [80, 70, 60],  # A
            [50, 60, 58],  # B: A > B for r1, r2; r3's +2 is a tie at threshold 5
            [82, 40, nan],  # C: r3 did not rate C
            [30, 20, 10],  # D
            [90, 90, 90],  # E (another source)
            [10, 10, 10],  # F
        ]
    )
    metric = np.array([0.9, 0.9, 0.5, 0.6, 0.1, 0.2])
    return raters, metric, list("ssssuu"), ["x", "x", "y", "y", "x", "x"]


def test_tau_like_hand_worked_with_rater_and_metric_ties() -> None:
    raters, metric, sources, cats = _tau_like_case()
    # Pairs of one source and their majorities (strict, among raters who rated both):
    # A-B + (2 of 3; r3 tie) metric tie → discordant;  A-C: r1 tie, r2 +, 2 voters → none
    # A-D + concordant;  B-C: one + one − → none;  B-D + concordant;
    # C-D + (2 of 2) metric 0.5 < 0.6 → discordant;  E-F + metric 0.1 < 0.2 → discordant.
    t = mm.tau_like(raters, metric, np.array(sources), threshold=5)
    assert (t.concordant[0], t.discordant[0]) == (2, 3)
    assert t.tau[0] == pytest.approx(-0.2)
    # Only pairs sharing the category: A-B, C-D, E-F, all discordant.
    w = mm.tau_like(raters, metric, np.array(sources), threshold=5, within=np.array(cats))
    assert (w.concordant[0], w.discordant[0], w.tau[0]) == (0, 3, -1.0)
    # Threshold 10 makes r2's A-B +10 a tie too: one + of three voters, no majority.
    big = mm.tau_like(raters, metric, np.array(sources), threshold=10)
    assert (big.concordant[0], big.discordant[0]) == (2, 2)
    d = _data(
        np.nanmean(raters, axis=1),
        metric,
        ["p"] * 6,
        sources,
        raters=raters,
        categories={"type": np.array(cats, object)},
        scale=(0, 100),
    )
    table = evaluate(d, ["tau_like"], by="type", tie_threshold=5)
    assert table.get("tau_like", "m0").value == pytest.approx(-0.2)
    assert table.get("tau_like", "m0", "x").value == pytest.approx(-1.0)  # A-B, E-F
    assert table.get("tau_like", "m0", "y").value == pytest.approx(-1.0)  # C-D


def test_not_defined_cases_have_a_named_reason_never_nan() -> None:
    d = _data(
        [1, 2, 3, 4.0],
        [1, 2, 3, 5.0],
        ["A"] * 4,
        list("abcd"),
        categories={"c": np.array(["p", "q", "q", "q"], object)},
    )
    sys_level = evaluate(d, ["pearson", "spa"], group_by="system").values
    assert all(v.value is None and v.reason == "not defined: 1 system" for v in sys_level)
    one = evaluate(d, ["pearson"], group_by="none", by="c").get("pearson", "m0", "p")
    assert one.value is None and "1 output" in (one.reason or "")
    const = _data([1, 2, 3, 4.0], [2, 2, 2, 2.0], list("ABAB"), list("aabb"))
    v = evaluate(const, ["pearson", "kendall_b"], group_by="none").values
    assert all(x.value is None and "constant" in (x.reason or "") for x in v)
    no_raters = evaluate(const, ["tau_like"]).get("tau_like", "m0")
    assert no_raters.value is None and "per-rater" in (no_raters.reason or "")


def test_tie_threshold_outside_the_scale_is_refused_naming_the_scale() -> None:
    d = _data([1, 2, 3, 4.0], [1, 2, 3, 5.0], list("ABAB"), list("aabb"), scale=(1.0, 5.0))
    with pytest.raises(UserError, match="1–5"):
        evaluate(d, ["tau_like"], tie_threshold=5)


def test_clusters_follow_mtme_rule() -> None:
    # Sorted best first; p[i, j] = p of "i better than j".
    p = np.full((4, 4), 0.5)
    p[0, 2] = 0.01  # 0 beats 2 → 2 opens cluster 2
    p[1, 3] = 0.2
    p[2, 3] = 0.04  # 2 (in the current cluster) beats 3 → cluster 3
    assert sig.assign_clusters(p, 0.05) == [1, 1, 2, 3]
    assert sig.assign_clusters(p, 0.001) == [1, 1, 1, 1]


def _matrix_data(seed: int = 0, s: int = 6, n: int = 30):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=s)
    z = quality[:, None] + rng.normal(size=(s, n))
    x = z + rng.normal(0, 0.6, (s, n))
    y = z + rng.normal(0, 1.5, (s, n))
    sysl = np.repeat([f"s{k}" for k in range(s)], n)
    src = np.tile([f"j{k:03d}" for k in range(n)], s)
    data = _data(z.ravel(), np.column_stack([x.ravel(), y.ravel()]), sysl, src)
    return data, x, y, z


@pytest.mark.parametrize(
    "group_by,level", [("system", "system"), ("item", "input"), ("none", "global")]
)
def test_perm_both_resamples_equal_nlpstats_permutations(group_by: str, level: str) -> None:
    from nlpstats.correlations.correlations import correlate

    data, x, y, z = _matrix_data()
    s, n = x.shape
    zx = (x - x.mean()) / x.std()
    zy = (y - y.mean()) / y.std()
    rng = np.random.default_rng(5)
    rows, cols = rng.random((20, s)) > 0.5, rng.random((20, n)) > 0.5
    stat = sig._Stat(data, "pearson", group_by, 5.0, None)
    zz = sig._standardise(data.metrics)
    a, b = np.where(rows, -1.0, 1.0), np.where(cols, -1.0, 1.0)
    signs = sig.Signs(a, b, data.system_codes(), data.source_codes())
    gen = sig._system_level_deltas if group_by == "system" else sig._pearson_deltas
    ((_, deltas),) = list(gen(stat, zz, signs))
    if group_by != "system":  # the path every other measure takes gives the same numbers
        ((_, slow),) = list(sig._generic_deltas(stat, zz, signs))
        np.testing.assert_allclose(slow, deltas, atol=1e-9)
    for r in range(20):
        swap = rows[r][:, None] ^ cols[r][None, :]
        xp, yp = np.where(swap, zy, zx), np.where(swap, zx, zy)
        expected = correlate(xp, z, level, "pearson") - correlate(yp, z, level, "pearson")
        assert deltas[r] == pytest.approx(expected, abs=1e-9)


def test_perm_both_pvalue_agrees_with_nlpstats_within_monte_carlo_error() -> None:
    from nlpstats.correlations.permutation import permutation_test

    data, x, y, z = _matrix_data(seed=2, s=8, n=20)
    np.random.seed(0)
    ref = permutation_test(
        x, y, z, "system", "pearson", "both", alternative="greater", n_resamples=2000
    ).pvalue
    ours = sig.rank_metrics(
        data,
        "pearson",
        group_by="system",
        test="perm-both",
        resamples=2000,
        seed=1,
        intervals=False,
    )
    p = ours.p_values.loc["m0", "m1"]
    assert abs(p - ref) < 4 * np.sqrt(max(ref * (1 - ref), 0.01) * 2 / 2000)


def test_ranking_is_seeded_paired_and_separates_a_clearly_worse_metric() -> None:
    rng = np.random.default_rng(0)
    s, n = 8, 40
    quality = rng.normal(size=s)
    h = (quality[:, None] + rng.normal(0, 0.5, (s, n))).ravel()
    good = h + rng.normal(0, 0.3, h.size)
    close = h + rng.normal(0, 0.32, h.size)
    noise = rng.normal(size=h.size)
    data = MetaEvalData(
        h,
        np.column_stack([noise, good, close]),
        ["noise", "good", "close"],
        np.repeat([f"s{k}" for k in range(s)], n),
        np.tile([f"j{k}" for k in range(n)], s),
    )
    for test in ("perm-both", "boot-both", "perm-items", "perm-systems"):
        r = sig.rank_metrics(data, "pearson", group_by="item", test=test, resamples=200, seed=3)
        assert r.order[-1] == "noise"
        assert r.clusters["noise"] > r.clusters[r.order[0]]
        assert r.p_values.loc[r.order[0], "noise"] <= 0.05
        again = sig.rank_metrics(data, "pearson", group_by="item", test=test, resamples=200, seed=3)
        assert again.p_values.equals(r.p_values)
    w = sig.rank_metrics(data, "pearson", group_by="none", test="williams")
    assert w.clusters["noise"] > 1
    with pytest.raises(UserError, match="Williams"):
        sig.rank_metrics(data, "kendall_b", test="williams")


@pytest.mark.parametrize("group_by", ["none", "item", "per-system"])
def test_vectorised_pearson_bootstrap_equals_the_resample_by_resample_path(group_by) -> None:
    data, *_ = _matrix_data(seed=4, s=5, n=12)
    stat = sig._Stat(data, "pearson", group_by, 5.0, None)
    fast = sig.bootstrap_samples(stat, data.metrics, 30, seed=2)
    looped = sig.bootstrap_samples(_Looped(data, group_by), data.metrics, 30, seed=2)
    np.testing.assert_allclose(fast, looped, atol=1e-9)


class _Looped(sig._Stat):
    """The ranked measure through the generic path (the fast path keys on 'pearson')."""

    def __init__(self, data: MetaEvalData, group_by: str) -> None:
        super().__init__(data, "pearson", group_by, 5.0, None)
        self.measure = "pearson (looped)"

    def rows(self, x, h=None, groups=None, data=None, within=None):  # type: ignore[no-untyped-def]
        d = data or self.data
        return mm.pearson(d.human if h is None else h, x, groups or self.groups)


def test_acc_eq_star_on_many_pairs_searches_a_sample_and_counts_every_pair(monkeypatch) -> None:
    rng = np.random.default_rng(8)
    h = rng.integers(0, 5, 300).astype(float)
    x = np.round(h + rng.normal(0, 1.0, 300), 1)
    g = mm.Groups.single(300)
    full = mm.acc_eq_star(h, x, g)
    assert full.sampled_pairs == 0
    monkeypatch.setattr(mm, "CALIBRATION_PAIRS", 5000)
    part = mm.acc_eq_star(h, x, g, seed=1)
    assert part.sampled_pairs == 5000
    # The value is acc_eq at the chosen ε over all 44,850 pairs, close to the full search's.
    assert part.value[0] == pytest.approx(mm.acc_eq(h, x, g, epsilon=part.epsilon[0])[0])
    assert full.value[0] - 0.01 <= part.value[0] <= full.value[0]


@pytest.mark.parametrize(
    "group_by,level", [("system", "system"), ("item", "input"), ("none", "global")]
)
def test_boot_both_resamples_equal_nlpstats_resampled_matrices(group_by: str, level: str) -> None:
    from nlpstats.correlations.correlations import correlate

    data, x, _, z = _matrix_data(seed=6, s=5, n=15)
    s, n = x.shape
    rng = np.random.default_rng(9)
    for _ in range(10):
        rows, cols = rng.integers(0, s, s), rng.integers(0, n, n)
        expected = correlate(x[rows][:, cols], z[rows][:, cols], level, "pearson")
        cs = np.bincount(rows, minlength=s).astype(float)[None, :]
        cj = np.bincount(cols, minlength=n).astype(float)[None, :]
        stat = sig._Stat(data, "pearson", group_by, 5.0, None)
        if group_by == "system":  # system codes are the row numbers (labels s0..s4)
            got = sig.system_bootstrap(stat, data.metrics[:, :1], rows[None, :], cj)[0, 0]
        else:
            got = sig._pearson_bootstrap(
                stat, data.metrics[:, :1], cs, cj, data.system_codes(), data.source_codes()
            )[0, 0]
        if np.isnan(expected):
            assert np.isnan(got)
        else:
            assert got == pytest.approx(expected, abs=1e-9)


def test_two_systems_or_outputs_are_not_a_correlation() -> None:
    """A correlation over two points is ±1 whatever the metric: a category of 2 systems
    reads "not defined: 2 systems", not 1.000; a third system makes it a figure."""
    rng = np.random.default_rng(2)
    systems = ["A", "B", "A", "B", "C", "D", "C", "D", "E", "C"]
    d = _data(
        rng.uniform(0, 100, 10),
        rng.uniform(0, 100, 10),
        systems,
        [f"s{k // 2}" for k in range(10)],
        categories={"c": np.array(["two"] * 4 + ["three"] * 6, object)},
    )
    table = evaluate(d, ["pearson", "spearman", "kendall_b", "pdp"], group_by="system", by="c")
    for measure in ("pearson", "spearman", "kendall_b", "pdp"):
        two = table.get(measure, "m0", "two")
        assert two.value is None and two.reason == "not defined: 2 systems", measure
    assert table.get("pearson", "m0", "three").value is not None
    assert table.get("pearson", "m0").value is not None
    pair = evaluate(d.subset(np.arange(10) < 2), ["pearson"], group_by="none")
    assert pair.get("pearson", "m0").reason == "not defined: 2 outputs"


def test_the_units_a_measure_runs_over_and_the_small_n_warning() -> None:
    systems = [f"sys{k % 6}" for k in range(60)]
    d = _data(np.arange(60.0), np.arange(60.0) ** 2, systems, [f"s{k // 6}" for k in range(60)])
    assert str(units_of(d, "system")) == "6 systems"
    assert str(units_of(d, "item")) == "10 sources"
    assert str(units_of(d, "none")) == "60 outputs"
    warning = small_n_warning(units_of(d, "system"))
    assert (
        warning
        == "Only 6 systems: a correlation over so few systems swings widely between samples (see the intervals)."
    )
    assert small_n_warning(units_of(d, "none")) is None
