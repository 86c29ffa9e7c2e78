"""Test statistics against scipy and hand computation; sanity pass rates on rounded scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from app.analysis.controls import words
from app.training.evaluate import pass_rates, regression_stats, sanity_pairs


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


def test_pass_rates_round_then_compare() -> None:
    identical = np.array([100.0, 99.6, 98.4, 94.4, 96.0])  # rounded: 100, 100, 98, 94, 96
    unrelated = np.array([0.0, 0.4, 1.5, 5.4, 3.0])  # rounded: 0, 0, 2, 5, 3
    rates = pass_rates(identical, unrelated)
    assert rates["identical"] == {
        ">=95": 0.8, ">=96": 0.8, ">=97": 0.6, ">=98": 0.6, ">=99": 0.4, "=100": 0.4
    }  # fmt: skip
    assert rates["unrelated"] == {
        "<=5": 1.0, "<=4": 0.8, "<=3": 0.8, "<=2": 0.6, "<=1": 0.4, "=0": 0.4
    }  # fmt: skip


def test_sanity_pairs_are_identical_and_word_soups() -> None:
    sources = [f"The river number {i} crossed the old bridge." for i in range(30)]
    vocab_texts = sources + ["Painters sold music to a quiet harbour village."]
    identical, unrelated = sanity_pairs(sources, vocab_texts, n=10, seed=0)
    assert len(identical) == 10 and all(e.text_a == e.text_b for e in identical)
    for e in unrelated:
        assert not {w.lower() for w in words(e.text_a)} & {w.lower() for w in words(e.text_b)}
