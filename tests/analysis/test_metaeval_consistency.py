"""The resampled statistic is the reported one, and units do not change results: the
tau-like's pair restriction in the bootstrap, standardised scores in its permutation
tests, a scale-free "constant" rule for Pearson, acc*_eq's sample seed, and measures
that are not defined when the humans distinguish nothing."""

from __future__ import annotations

import numpy as np
import pytest

from meaningbench.analysis import metaeval_measures as mm
from meaningbench.analysis import metaeval_significance as sig
from meaningbench.analysis.metaeval import MetaEvalData, evaluate
from meaningbench.errors import UserError


def _rated(scale_second: float = 1.0, offset: float = 0.0) -> MetaEvalData:
    """6 systems × 30 sources, 3 raters, two metrics and a two-valued category; the
    humans rate category b `offset` lower and the first metric scores it `offset` higher,
    so pairs across categories disagree."""
    rng = np.random.default_rng(1)
    s, n, r = 6, 30, 3
    systems = np.repeat([f"s{i}" for i in range(s)], n).astype(object)
    sources = np.tile([f"q{j}" for j in range(n)], s).astype(object)
    cat = rng.choice(["a", "b"], s * n).astype(object)
    shift = offset * (cat == "b")
    true = rng.normal(50, 20, s * n)
    raters = true[:, None] + rng.normal(0, 10, (s * n, r))
    metrics = np.column_stack(
        [
            true + rng.normal(0, 15, s * n) + 2 * shift,
            (true + rng.normal(0, 25, s * n)) * scale_second,
        ]
    )
    raters -= shift[:, None]
    return MetaEvalData(
        raters.mean(axis=1),
        metrics,
        ["m1", "m2"],
        systems,
        sources,
        raters=raters,
        categories={"t": cat},
        scale=(0.0, 100.0),
    )


def test_tau_like_bootstrap_keeps_the_pairs_within_restriction() -> None:
    data = _rated(offset=30.0)
    restricted = evaluate(data, ["tau_like"], pairs_within="t")
    plain = evaluate(data, ["tau_like"])
    reported = np.array([restricted.get("tau_like", m).value for m in ("m1", "m2")])
    unrestricted = np.array([plain.get("tau_like", m).value for m in ("m1", "m2")])
    assert (reported - unrestricted)[0] > 0.3  # the restriction matters here
    ranking = sig.rank_metrics(
        data, "tau_like", test="boot-both", resamples=300, seed=0, pairs_within="t"
    )
    for name, value in zip(("m1", "m2"), reported, strict=True):
        lo, hi = ranking.intervals[name]
        assert lo <= value <= hi
    stat = sig._Stat(data, "tau_like", "item", 5.0, data.category("t"))
    n_sys, n_src = data.system_codes().max() + 1, data.source_codes().max() + 1
    unchanged = sig.resample_values(
        stat, data.metrics, np.ones(n_sys, np.int64), np.ones(n_src, np.int64)
    )
    np.testing.assert_allclose(unchanged, reported)  # the unchanged resample is the value


def test_tau_like_permutation_pvalues_do_not_depend_on_a_metrics_unit() -> None:
    p = {}
    for scale in (1.0, 0.01):
        data = _rated(scale_second=scale)
        r = sig.rank_metrics(
            data, "tau_like", test="perm-both", resamples=500, seed=0, intervals=False
        )
        p[scale] = r.p_values.to_numpy()
        assert r.values["m2"] == pytest.approx(
            evaluate(_rated(), ["tau_like"]).get("tau_like", "m2").value
        )
    np.testing.assert_array_equal(p[1.0], p[0.01])


def test_pearson_is_defined_on_scores_of_any_scale() -> None:
    h = np.array([1, 2, 3, 4.0])
    x = np.array([1, 3, 2, 4.0])
    g = mm.Groups.single(4)
    base = mm.pearson(h, x, g)[0]
    assert base == pytest.approx(0.8)
    for unit in (1e-7, 1e7):
        assert mm.pearson(h * unit, x * unit, g)[0] == pytest.approx(base)
        d = MetaEvalData(
            h * unit,
            (x * unit)[:, None],
            ["m"],
            np.array(list("ABAB"), object),
            np.array(list("abcd"), object),
        )
        assert evaluate(d, ["pearson"], group_by="none").get("pearson", "m").value == (
            pytest.approx(base)
        )
    # Truly constant scores (with rounding noise of the mean) stay not defined.
    flat = np.full(4, 0.1) + np.array([0, 1, 0, 1]) * 1e-17
    assert np.isnan(mm.pearson(h, flat, g)[0])


def test_acc_eq_star_resamples_search_the_pair_sample_the_seed_draws(monkeypatch) -> None:
    rng = np.random.default_rng(8)
    h = rng.integers(0, 5, 300).astype(float)
    x = np.round(h + rng.normal(0, 1.0, (2, 300)), 1).T
    data = MetaEvalData(
        h,
        x,
        ["a", "b"],
        np.array(["s"] * 300, object),
        np.array([f"j{k}" for k in range(300)], object),
    )
    monkeypatch.setattr(mm, "CALIBRATION_PAIRS", 500)
    for seed in (3, 11):
        reported = evaluate(data, ["acc_eq_star"], group_by="none", seed=seed)
        stat = sig._Stat(data, "acc_eq_star", "none", 5.0, None, seed)
        np.testing.assert_allclose(
            stat.rows(data.metrics.T),
            [reported.get("acc_eq_star", m).value for m in ("a", "b")],
        )


def test_spa_and_acc_eq_star_are_not_defined_when_humans_are_constant() -> None:
    systems = np.repeat(["A", "B", "C"], 4).astype(object)
    sources = np.tile(list("wxyz"), 3).astype(object)
    x = np.arange(12, dtype=float)[:, None]
    const = MetaEvalData(np.full(12, 3.0), x, ["m"], systems, sources)
    for group_by in ("none", "item", "system"):
        t = evaluate(const, ["acc_eq_star", "spa"], group_by=group_by)
        for measure in ("acc_eq_star", "spa"):
            v = t.get(measure, "m")
            assert v.value is None
            assert "human scores" in (v.reason or "")
    # Humans that differ only between sources still tell no two systems apart.
    same = MetaEvalData(np.tile([1.0, 2, 3, 4], 3), x, ["m"], systems, sources)
    spa = evaluate(same, ["spa"]).get("spa", "m")
    assert spa.value is None and "between systems" in (spa.reason or "")
    assert evaluate(same, ["acc_eq_star"], group_by="none").get("acc_eq_star", "m").value


def test_methods_paragraph_names_the_permutation_variant_and_the_epsilon_search() -> None:
    from meaningbench.analysis.metaeval_text import methods_paragraph

    data = _rated()
    table = evaluate(data, ["acc_eq_star"], group_by="item")
    ranking = sig.rank_metrics(
        data, "acc_eq_star", group_by="item", resamples=20, seed=2, intervals=False
    )
    text = methods_paragraph(table, ranking)
    assert "nlpstats" in text and "swaps each output on its own" in text
    assert "searches its ε again on every resample" in text
    assert "standardised per metric" in text
    other = methods_paragraph(table, sig.rank_metrics(data, "pearson", resamples=20))
    assert "searches its ε again" not in other


def _systems_data(s: int = 6, n: int = 25) -> MetaEvalData:
    """s systems of clearly different quality × n sources; metric m0 follows the humans,
    m1 is mostly noise."""
    rng = np.random.default_rng(5)
    quality = np.linspace(0, 3, s)
    human = quality[:, None] + rng.normal(0, 1, (s, n))
    good = human + rng.normal(0, 0.3, (s, n))
    noise = rng.normal(0, 1, (s, n)) * 40 + 10  # another unit
    return MetaEvalData(
        human.ravel(),
        np.column_stack([good.ravel(), noise.ravel()]),
        ["m0", "m1"],
        np.repeat([f"s{k}" for k in range(s)], n).astype(object),
        np.tile([f"j{k:02d}" for k in range(n)], s),  # label order = layout.astype(object),
    )


def test_spa_ranks_by_permutation_with_fixed_inner_flips() -> None:
    data = _systems_data()
    reported = evaluate(data, ["spa"], seed=4)
    values = [reported.get("spa", m).value for m in ("m0", "m1")]
    stat = sig._Stat(data, "spa", "system", 5.0, None, seed=4)
    # The unchanged scores, raw or standardised, give the reported SPA.
    np.testing.assert_allclose(stat.rows(data.metrics.T), values)
    np.testing.assert_allclose(stat.rows(sig._standardise(data.metrics).T), values)
    # One resample by hand: an output takes the other metric's z-score when exactly one of
    # its system and its source is flipped; SPA of each hybrid, same inner flips.
    z = sig._standardise(data.metrics)
    rng = np.random.default_rng(0)
    a, b = (
        np.where(rng.random((3, 6)) > 0.5, -1.0, 1.0),
        np.where(rng.random((3, 25)) > 0.5, -1.0, 1.0),
    )
    signs = sig.Signs(a, b, data.system_codes(), data.source_codes())
    ((_, deltas),) = list(sig._generic_deltas(stat, z, signs))
    inner = mm.permutation_signs(4, 1000, 25)
    hm = data.human.reshape(6, 25)
    for r in range(3):
        swap = (a[r][:, None] * b[r][None, :]) < 0
        z0, z1 = z[:, 0].reshape(6, 25), z[:, 1].reshape(6, 25)
        h0, h1 = np.where(swap, z1, z0), np.where(swap, z0, z1)
        assert deltas[r] == pytest.approx(mm.spa(hm, h0, inner) - mm.spa(hm, h1, inner))
    ranking = sig.rank_metrics(data, "spa", test="perm-both", resamples=200, seed=4)
    assert ranking.order == ["m0", "m1"] and ranking.clusters == {"m0": 1, "m1": 2}
    assert ranking.values["m0"] == pytest.approx(values[0])
    assert ranking.p_values.loc["m0", "m1"] <= 0.05
    again = sig.rank_metrics(data, "spa", test="perm-both", resamples=200, seed=4)
    assert again.p_values.equals(ranking.p_values)
    with pytest.raises(UserError, match="permutation test"):
        sig.rank_metrics(data, "spa", test="boot-both")
