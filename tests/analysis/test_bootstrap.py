"""Bootstrap intervals: exact per-resample statistics, seeds, groups, the fixed-rank variant."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from meaningbench.analysis.bootstrap import bootstrap, resample_counts
from meaningbench.analysis.correlation import correlate


def _pair(n: int, rho: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = rho * x + np.sqrt(1 - rho**2) * rng.normal(size=n)
    return 50 + 15 * x, np.round(np.clip(50 + 20 * y, 0, 100))


@pytest.mark.parametrize("method", ["rerank", "fixed"])
def test_each_resample_equals_scipy_on_the_drawn_items(method: str) -> None:
    x, y = _pair(120, 0.6, 1)
    xm = np.column_stack([x, np.round(x / 5) * 5, -x])
    xm[::11, 1] = np.nan  # a column with its own items
    samples = bootstrap(xm, y, n_boot=40, seed=7, spearman=method)
    counts = np.vstack(list(resample_counts(120, 40, 7)))
    for b in range(40):
        drawn = np.repeat(np.arange(120), counts[b].astype(int))
        for j in range(xm.shape[1]):
            a, h = xm[drawn, j], y[drawn]
            keep = np.isfinite(a)
            assert samples.pearson[b, j] == pytest.approx(stats.pearsonr(a[keep], h[keep])[0])
            if method == "rerank":
                rho = stats.spearmanr(a[keep], h[keep])[0]
                assert samples.spearman[b, j] == pytest.approx(rho, abs=1e-12)


def test_source_groups_are_drawn_whole() -> None:
    x, y = _pair(90, 0.5, 2)
    groups = np.repeat([f"s{k:02d}" for k in range(30)], 3)  # codes follow sorted labels
    samples = bootstrap(x, y, n_boot=30, seed=3, groups=groups, spearman="rerank")
    assert samples.unit == "groups" and samples.n_units == 30
    counts = np.vstack(list(resample_counts(30, 30, 3)))
    for b in range(30):
        drawn = np.repeat(np.arange(90), np.repeat(counts[b].astype(int), 3))
        assert samples.pearson[b, 0] == pytest.approx(stats.pearsonr(x[drawn], y[drawn])[0])
        assert samples.spearman[b, 0] == pytest.approx(stats.spearmanr(x[drawn], y[drawn])[0])


def test_interval_contains_estimate_and_is_reproducible() -> None:
    x, y = _pair(300, 0.5, 4)
    a = correlate(x, y, n_boot=500, seed=11)
    b = correlate(x, y, n_boot=500, seed=11)
    c = correlate(x, y, n_boot=500, seed=12)
    assert a.pearson_ci == b.pearson_ci and a.spearman_ci == b.spearman_ci
    assert a.pearson_ci != c.pearson_ci
    assert a.pearson_ci[0] < a.pearson < a.pearson_ci[1]
    assert a.spearman_ci[0] < a.spearman < a.spearman_ci[1]


def test_interval_agrees_with_scipy_bootstrap() -> None:
    x, y = _pair(400, 0.5, 5)
    ours = correlate(x, y, n_boot=2000, seed=1)
    ref = stats.bootstrap(
        (x, y),
        lambda a, b: stats.pearsonr(a, b)[0],
        paired=True,
        vectorized=False,
        n_resamples=2000,
        method="percentile",
        rng=np.random.default_rng(2),
    ).confidence_interval
    # Different random draws: the ends agree to Monte Carlo error.
    assert ours.pearson_ci[0] == pytest.approx(ref.low, abs=0.02)
    assert ours.pearson_ci[1] == pytest.approx(ref.high, abs=0.02)


def test_fixed_ranks_close_to_exact_rerank_at_a_few_thousand_items() -> None:
    x, y = _pair(2500, 0.8, 6)
    exact = bootstrap(x, y, n_boot=300, seed=5, spearman="rerank").interval("spearman")[0]
    fixed = bootstrap(x, y, n_boot=300, seed=5, spearman="fixed").interval("spearman")[0]
    width = exact[1] - exact[0]
    assert np.abs(exact - fixed).max() < 0.15 * width


def test_auto_method_and_no_bootstrap() -> None:
    x, y = _pair(50, 0.5, 7)
    assert bootstrap(x, y, n_boot=20).spearman_method == "rerank"
    big_x, big_y = _pair(1500, 0.5, 7)
    assert bootstrap(big_x, big_y, n_boot=20).spearman_method == "fixed"
    r = correlate(x, y, n_boot=0)
    assert np.isnan(r.pearson_ci).all() and np.isfinite(r.pearson)


def test_fixed_spearman_resamples_the_full_sample_ranks() -> None:
    x, y = _pair(150, 0.6, 8)
    samples = bootstrap(x, y, n_boot=20, seed=4, spearman="fixed")
    counts = np.vstack(list(resample_counts(150, 20, 4)))
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    for b in range(20):
        drawn = np.repeat(np.arange(150), counts[b].astype(int))
        assert samples.spearman[b, 0] == pytest.approx(stats.pearsonr(rx[drawn], ry[drawn])[0])


def test_large_studies_draw_poisson_counts_and_stay_exact_per_resample() -> None:
    from meaningbench.analysis.bootstrap import MULTINOMIAL_MAX_UNITS

    n = MULTINOMIAL_MAX_UNITS + 5000
    counts = np.vstack(list(resample_counts(n, 8, 1)))
    assert counts.mean() == pytest.approx(1.0, abs=0.01)
    assert counts.var() == pytest.approx(1.0, abs=0.02)  # Poisson(1): variance 1
    x, y = _pair(n + 300, 0.4, 9)
    x[::97] = np.nan  # a single column: its unscored items are not units
    keep = np.isfinite(x)
    samples = bootstrap(x, y, n_boot=8, seed=1)
    counts = np.vstack(list(resample_counts(int(keep.sum()), 8, 1)))
    for b in range(3):
        drawn = np.repeat(np.arange(n + 300)[keep], counts[b].astype(int))
        assert samples.pearson[b, 0] == pytest.approx(
            stats.pearsonr(x[drawn], y[drawn])[0], abs=1e-5
        )


def test_groups_with_missing_cells() -> None:
    x, y = _pair(90, 0.5, 10)
    xm = np.column_stack([x, x + 5.0])
    xm[::4, 1] = np.nan
    groups = np.repeat(np.arange(30), 3)
    samples = bootstrap(xm, y, n_boot=15, seed=2, groups=groups, spearman="rerank")
    counts = np.vstack(list(resample_counts(30, 15, 2)))
    for b in range(15):
        drawn = np.repeat(np.arange(90), np.repeat(counts[b].astype(int), 3))
        a, h = xm[drawn, 1], y[drawn]
        keep = np.isfinite(a)
        assert samples.pearson[b, 1] == pytest.approx(stats.pearsonr(a[keep], h[keep])[0])
        assert samples.spearman[b, 1] == pytest.approx(stats.spearmanr(a[keep], h[keep])[0])
