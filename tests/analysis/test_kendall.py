"""Kendall's τ-b kept across single-item changes equals scipy after every step."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from meaningbench.analysis.kendall import KendallCache, kendall_columns
from meaningbench.analysis.ranks import MaskedRanks
from meaningbench.analysis.stats import valid_mask


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cache_follows_single_changes_exactly(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 60
    x = np.column_stack(
        [rng.normal(size=n), np.round(rng.normal(size=n)), rng.integers(0, 4, n).astype(float)]
    )
    x[rng.random((n, 3)) < 0.1] = np.nan
    y = np.round(rng.uniform(0, 10, n))
    y[rng.random(n) < 0.3] = np.nan
    ranks = MaskedRanks(x)
    cache = KendallCache()
    for step in range(40):
        k = int(rng.integers(0, n))
        kind = step % 4
        if kind == 3:
            y[k] = np.nan  # an undo of the item's only rating
        else:
            y[k] = float(np.round(rng.uniform(0, 10)))  # a new or revised score
        mask = valid_mask(x, y)
        tau, p = cache.compute(x, y, mask, ranks)
        for j in range(3):
            keep = mask[:, j]
            if keep.sum() < 3:
                continue
            ref = stats.kendalltau(x[keep, j], y[keep])
            assert tau[j] == pytest.approx(ref.statistic, abs=1e-12), (step, j)
            assert p[j] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-300), (step, j)


def test_several_changes_recompute() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 2))
    y = rng.normal(size=40)
    cache = KendallCache()
    ranks = MaskedRanks(x)
    cache.compute(x, y, valid_mask(x, y), ranks)
    y[:5] = rng.normal(size=5)
    tau, _ = cache.compute(x, y, valid_mask(x, y), ranks)
    assert tau[0] == pytest.approx(stats.kendalltau(x[:, 0], y).statistic)
    again, _ = kendall_columns(x, y, valid_mask(x, y))
    np.testing.assert_allclose(again, tau)
