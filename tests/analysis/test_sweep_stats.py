"""The sweep's own statistics against scipy on explicitly resampled data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from meaningbench.analysis.bootstrap import resample_counts
from meaningbench.analysis.sweep_stats import best_versus_runner_up, errors_01, kendall_interval


def _data(n: int = 60, seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.normal(size=n).round(1)  # ties, as ratings have
    good = human + rng.normal(scale=0.8, size=n)
    worse = human + rng.normal(scale=1.6, size=n)
    return good, worse, human


def test_kendall_interval_is_the_percentile_interval_of_scipy_on_each_resample() -> None:
    x, _, y = _data()
    taus = []
    for counts in resample_counts(x.size, 200, 7):
        for w in counts.astype(int):
            taus.append(stats.kendalltau(np.repeat(x, w), np.repeat(y, w)).statistic)
    expected = np.quantile(taus, [0.025, 0.975])
    low, high = kendall_interval(x, y, n_boot=200, seed=7)
    assert (low, high) == pytest.approx(tuple(expected), abs=1e-12)


def test_best_versus_runner_up_against_explicit_resamples() -> None:
    good, worse, human = _data()
    test = best_versus_runner_up(good, worse, human, n_boot=300, seed=5)
    assert test.best == pytest.approx(stats.pearsonr(good, human).statistic, abs=1e-12)
    assert test.runner_up == pytest.approx(stats.pearsonr(worse, human).statistic, abs=1e-12)
    diffs = []
    for counts in resample_counts(good.size, 300, 5):
        for w in counts.astype(int):
            h = np.repeat(human, w)
            diffs.append(
                stats.pearsonr(np.repeat(good, w), h).statistic
                - stats.pearsonr(np.repeat(worse, w), h).statistic
            )
    diffs_arr = np.array(diffs)
    assert test.difference_ci == pytest.approx(
        tuple(np.quantile(diffs_arr, [0.025, 0.975])), abs=1e-6
    )
    assert test.bootstrap_p == pytest.approx(np.mean(diffs_arr <= 0), abs=1e-12)
    assert 0.0 <= test.williams_p < 0.05 and test.williams_t > 0
    # Swapped, the runner-up is not better: a large p both ways.
    swapped = best_versus_runner_up(worse, good, human, n_boot=300, seed=5)
    assert swapped.williams_p > 0.95 and swapped.bootstrap_p > 0.95
    assert not swapped.significant


def test_errors_on_the_common_scale_leave_out_missing_values() -> None:
    metric = np.array([0.9, 0.5, np.nan, 0.2])
    human = np.array([0.7, 0.5, 0.1, np.nan])
    rmse, mae, n = errors_01(metric, human)
    assert n == 2
    assert rmse == pytest.approx(np.sqrt((0.2**2 + 0.0) / 2))
    assert mae == pytest.approx(0.1)
