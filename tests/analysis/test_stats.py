"""Point statistics against scipy / sklearn on the same numbers, ranks, Williams' test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from meaningbench.analysis.ranks import ColumnOrder, dense_ranks
from meaningbench.analysis.stats import point_statistics, system_pearson, valid_mask, williams_test


def _data(n: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.round(rng.uniform(0, 100, n))  # ratings: integer, many ties
    x = np.empty((n, m))
    x[:, 0] = y * 0.6 + rng.normal(0, 15, n)
    x[:, 1] = np.round(x[:, 0] / 10) * 10  # heavy ties
    x[:, 2] = rng.uniform(0, 100, n)  # unrelated
    x[:, 3] = -y + rng.normal(0, 5, n)  # negative
    x[rng.random(n) < 0.1, 2] = np.nan  # missing scores
    y[rng.random(n) < 0.05] = np.nan  # unrated items
    return x, y


@pytest.mark.parametrize(("n", "seed"), [(12, 0), (30, 1), (200, 2), (3000, 3)])
def test_point_statistics_match_scipy(n: int, seed: int) -> None:
    x, y = _data(n, 4, seed)
    ps = point_statistics(x, y)
    for j in range(x.shape[1]):
        keep = np.isfinite(x[:, j]) & np.isfinite(y)
        a, b = x[keep, j], y[keep]
        assert ps.n[j] == keep.sum()
        r, p = stats.pearsonr(a, b)
        assert ps.pearson[j] == pytest.approx(r, rel=1e-9, abs=1e-12)
        assert ps.pearson_p[j] == pytest.approx(p, rel=1e-6, abs=1e-300)
        rho, p = stats.spearmanr(a, b)
        assert ps.spearman[j] == pytest.approx(rho, rel=1e-9, abs=1e-12)
        assert ps.spearman_p[j] == pytest.approx(p, rel=1e-6, abs=1e-300)
        tau, p = stats.kendalltau(a, b)
        assert ps.kendall[j] == pytest.approx(tau, rel=1e-9, abs=1e-12)
        assert ps.kendall_p[j] == pytest.approx(p, rel=1e-6, abs=1e-300)


def test_kendall_exact_path_for_small_untied_samples() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=20)
    y = x + rng.normal(size=20)
    ps = point_statistics(x, y)
    res = stats.kendalltau(x, y)  # scipy uses the exact null distribution here
    assert ps.kendall[0] == pytest.approx(res.statistic)
    assert ps.kendall_p[0] == pytest.approx(res.pvalue, rel=1e-9)


def test_r2_and_rmse_use_the_metric_value_as_the_prediction() -> None:
    human = np.array([10.0, 40.0, 50.0, 80.0, 90.0])
    metric = np.array([20.0, 30.0, 60.0, 70.0, 100.0])
    ps = point_statistics(metric, human)
    ss_res = ((human - metric) ** 2).sum()  # 500
    ss_tot = ((human - human.mean()) ** 2).sum()  # 4120
    assert ss_res == 500 and ss_tot == 4120
    assert ps.r2[0] == pytest.approx(1 - 500 / 4120)
    assert ps.rmse[0] == pytest.approx(np.sqrt(500 / 5))
    from sklearn import metrics as sklearn_metrics

    assert ps.r2[0] == pytest.approx(sklearn_metrics.r2_score(human, metric))
    # A metric on another scale correlates perfectly yet predicts badly: R² < 0.
    far = point_statistics(human / 10.0, human)
    assert far.pearson[0] == pytest.approx(1.0)
    assert far.r2[0] < 0


def test_rating_argument_separates_r2_from_the_correlation_target() -> None:
    x, y = _data(300, 4, 9)
    z = (y - np.nanmean(y)) / np.nanstd(y)
    ps_z = point_statistics(x, z, rating=y)
    ps_raw = point_statistics(x, y)
    np.testing.assert_allclose(ps_z.r2, ps_raw.r2)
    np.testing.assert_allclose(ps_z.pearson, ps_raw.pearson)


def test_degenerate_columns_give_nan_not_errors() -> None:
    y = np.array([1.0, 2.0, 3.0, 4.0])
    x = np.column_stack([np.full(4, 5.0), [np.nan, np.nan, np.nan, 1.0], [1.0, 2.0, 3.0, 5.0]])
    ps = point_statistics(x, y)
    assert np.isnan(ps.pearson[:2]).all() and np.isnan(ps.spearman[:2]).all()
    assert np.isnan(ps.kendall[:2]).all()
    assert ps.pearson[2] == pytest.approx(stats.pearsonr(x[:, 2], y)[0])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=40),
    st.lists(st.booleans(), min_size=40, max_size=40),
)
def test_midranks_of_any_subset_match_rankdata(values: list[int], keep: list[bool]) -> None:
    v = np.array(values, dtype=float)
    mask = np.array(keep[: v.size])
    order = ColumnOrder.of(v)
    ranks = order.midranks(mask)[:, 0]
    if mask.any():
        np.testing.assert_allclose(ranks[mask], stats.rankdata(v[mask]))
    assert np.isnan(ranks[~mask]).all()


def test_dense_ranks() -> None:
    assert dense_ranks(np.array([3.0, np.nan, 1.0, 3.0])).tolist() == [2, 0, 1, 2]


def test_system_level_is_pearson_of_system_means() -> None:
    rng = np.random.default_rng(4)
    n = 400
    systems = rng.integers(0, 6, n)
    y = systems * 10 + rng.normal(0, 20, n)
    x = np.column_stack([y + rng.normal(0, 30, n), rng.normal(size=n)])
    x[::9, 0] = np.nan
    got = system_pearson(x, y, valid_mask(x, y), systems)
    for j in range(2):
        frame = pd.DataFrame({"s": systems, "x": x[:, j], "y": y}).dropna()
        means = frame.groupby("s").mean()
        assert got[j] == pytest.approx(stats.pearsonr(means["x"], means["y"])[0])
    # Fewer than three systems: undefined.
    assert np.isnan(system_pearson(x, y, valid_mask(x, y), systems % 2)).all()


def test_williams_published_example() -> None:
    # Steiger (1980) / psych::r.test(103, .4, .5, .1): t = -0.89, two-tailed p = 0.37.
    t, p = williams_test(0.4, 0.5, 0.1, 103, alternative="two-sided")
    assert float(t) == pytest.approx(-0.89, abs=0.005)
    assert float(p) == pytest.approx(0.37, abs=0.005)


def test_williams_hand_computed_case() -> None:
    r12, r13, r23, n = 0.6, 0.45, 0.5, 60
    k = 1 - 0.36 - 0.2025 - 0.25 + 2 * 0.6 * 0.45 * 0.5  # 0.4575
    denom = 2 * k * 59 / 57 + ((1.05) ** 2 / 4) * 0.5**3
    t_hand = 0.15 * np.sqrt(59 * 1.5 / denom)
    t, p = williams_test(r12, r13, r23, n)
    assert float(t) == pytest.approx(t_hand)
    assert float(p) == pytest.approx(stats.t.sf(t_hand, 57))
    t_rev, p_rev = williams_test(r13, r12, r23, n)
    assert float(t_rev) == pytest.approx(-t_hand)
    assert float(p) + float(p_rev) == pytest.approx(1.0)
    assert float(williams_test(0.5, 0.5, 0.3, 50)[0]) == 0.0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=6, max_size=30),
    st.lists(st.lists(st.booleans(), min_size=30, max_size=30), min_size=1, max_size=6),
)
def test_masked_ranks_stay_exact_through_updates(
    values: list[int], masks: list[list[bool]]
) -> None:
    from meaningbench.analysis.ranks import MaskedRanks

    n = len(values)
    x = np.column_stack([np.array(values, float), -np.array(values, float)])
    cache = MaskedRanks(x)
    previous = np.array(masks[0][:n])
    for raw in masks:
        mask = np.array(raw[:n])
        # Small steps (the incremental path) as well as jumps (the recompute path).
        for step in (mask, previous ^ (np.arange(n) == 0)):
            full = np.column_stack([step, step])
            got = cache.ranks(full)
            for j in range(2):
                if step.any():
                    np.testing.assert_allclose(got[step, j], stats.rankdata(x[step, j]))
                assert np.isnan(got[~step, j]).all()
            previous = step


def test_empty_inputs_give_empty_or_nan_tables() -> None:
    from meaningbench.analysis.correlation import correlate_many

    none = correlate_many(np.empty((5, 0)), np.arange(5.0), [], n_boot=10)
    assert none.results == {}
    no_items = correlate_many(np.empty((0, 2)), np.empty(0), ["a", "b"], n_boot=10)
    assert no_items.results["a"].n == 0 and np.isnan(no_items.results["a"].pearson)
    unrated = correlate_many(np.arange(3.0)[:, None], np.full(3, np.nan), ["a"], n_boot=10)
    assert unrated.n_items == 0 and np.isnan(unrated.results["a"].spearman_ci).all()
