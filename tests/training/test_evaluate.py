"""Test statistics against scipy and hand computation; sanity pass rates on rounded scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from meaningbench.training.evaluate import regression_stats, summarize_runs


def test_regression_stats_match_scipy_and_hand_values() -> None:
    rng = np.random.default_rng(1)
    human = rng.uniform(0, 100, 50)
    predicted = human * 0.5 + rng.normal(0, 10, 50)
    out = regression_stats(predicted, human)
    assert out["pearson"] == pytest.approx(stats.pearsonr(predicted, human).statistic)
    assert out["spearman"] == pytest.approx(stats.spearmanr(predicted, human).statistic)
    assert out["kendall"] == pytest.approx(stats.kendalltau(predicted, human).statistic)
    # Hand-computed small case: predictions (1, 2, 3) for humans (1, 2, 4):
    # residuals (0, 0, 1) → RMSE = sqrt(1/3); SS_tot = 14 − 49/3 + ... = 4.6667 → R² = 1 − 1/4.6667.
    small = regression_stats([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])
    assert small["rmse"] == pytest.approx(math.sqrt(1 / 3))
    assert small["r2"] == pytest.approx(1 - 1 / (14 / 3))


def test_r2_can_be_negative_and_constants_give_no_correlation() -> None:
    out = regression_stats([90.0, 90.0, 90.0], [10.0, 20.0, 30.0])
    assert out["r2"] < 0
    assert math.isnan(out["pearson"])


def test_intervals_come_from_a_group_bootstrap() -> None:
    rng = np.random.default_rng(2)
    human = rng.uniform(0, 100, 60)
    predicted = human + rng.normal(0, 20, 60)
    out = regression_stats(predicted, human, groups=np.arange(60) // 3)
    low, high = out["pearson_ci"]
    assert low < out["pearson"] < high


def test_summaries_over_runs_are_mean_and_sample_sd() -> None:
    out = summarize_runs([{"pearson": 0.2}, {"pearson": 0.4}, {"pearson": None}], ["pearson"])
    assert out["pearson"] == pytest.approx(0.3)
    assert out["pearson_sd"] == pytest.approx(np.std([0.2, 0.4], ddof=1))
