"""Agreement statistics against krippendorff, Shrout & Fleiss (1979) and scipy."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy import stats

from meaningbench.analysis.agreement import (
    agreement,
    icc_one_way,
    icc_two_way,
    krippendorff_alpha_interval,
    split_half,
)

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges, and their published ICCs.
SF_DATA = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
    dtype=float,
)
SF_PUBLISHED = {
    "ICC(1,1)": 0.17,
    "ICC(2,1)": 0.29,
    "ICC(3,1)": 0.71,
    "ICC(1,k)": 0.44,
    "ICC(2,k)": 0.62,
    "ICC(3,k)": 0.91,
}


def _long(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(items × raters) matrix with NaN → long arrays."""
    item, rater = np.nonzero(np.isfinite(matrix))
    return item, rater, matrix[item, rater]


def test_alpha_matches_krippendorff_package() -> None:
    rng = np.random.default_rng(0)
    truth = rng.uniform(0, 100, 80)
    matrix = truth[:, None] + rng.normal(0, 15, (80, 5))
    matrix[rng.random((80, 5)) < 0.4] = np.nan  # incomplete, some items with one rating
    item, _, values = _long(matrix)
    expected = krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="interval")
    assert krippendorff_alpha_interval(item, values) == pytest.approx(expected, rel=1e-9)


def test_alpha_of_identical_raters_is_one() -> None:
    matrix = np.repeat(np.array([[10.0], [50.0], [90.0], [30.0]]), 3, axis=1)
    item, _, values = _long(matrix)
    assert krippendorff_alpha_interval(item, values) == pytest.approx(1.0)


def test_two_way_icc_matches_shrout_fleiss() -> None:
    got = icc_two_way(SF_DATA)
    for key, value in SF_PUBLISHED.items():
        assert got[key] == pytest.approx(value, abs=0.005), key


def test_one_way_icc_equals_icc1_on_a_complete_design() -> None:
    item, _, values = _long(SF_DATA)
    got = icc_one_way(item, values)
    assert got["ICC(1,1)"] == pytest.approx(SF_PUBLISHED["ICC(1,1)"], abs=0.005)
    assert got["ICC(1,k)"] == pytest.approx(SF_PUBLISHED["ICC(1,k)"], abs=0.005)
    assert got["k0"] == pytest.approx(4.0)


def test_agreement_chooses_the_icc_model_by_design() -> None:
    item, rater, values = _long(SF_DATA)
    complete = agreement(item, rater, values)
    assert complete.icc_model == "ICC(2,1)"
    assert complete.icc == pytest.approx(0.29, abs=0.005)
    sparse = SF_DATA.copy()
    sparse[0, 0] = np.nan  # one missing cell: raters no longer cross all items
    item, rater, values = _long(sparse)
    incomplete = agreement(item, rater, values)
    assert incomplete.icc_model == "ICC(1,1)"
    assert incomplete.icc == pytest.approx(icc_one_way(item, values)["ICC(1,1)"])


def test_split_half_with_two_raters_is_their_correlation() -> None:
    rng = np.random.default_rng(1)
    truth = rng.uniform(0, 100, 60)
    matrix = truth[:, None] + rng.normal(0, 20, (60, 2))
    item, rater, values = _long(matrix)
    r, sb = split_half(item, values, raters=rater, n_splits=10)
    expected = stats.pearsonr(matrix[:, 0], matrix[:, 1])[0]
    assert r == pytest.approx(expected)
    assert sb == pytest.approx(2 * expected / (1 + expected))
    assert agreement(item, rater, values).split_half_r == pytest.approx(expected)


def test_split_half_within_items_estimates_the_reliability_of_one_rating() -> None:
    # Crowd design: 3 of 30 raters per item. A half is one or two ratings; a rating's
    # reliability is var(truth) / (var(truth) + var(noise)) = 833 / (833 + 400).
    rng = np.random.default_rng(3)
    n = 3000
    truth = rng.uniform(0, 100, n)
    item = np.repeat(np.arange(n), 2)
    rater = rng.integers(0, 30, 2 * n)
    values = truth[item] + rng.normal(0, 20, 2 * n)
    r, sb = split_half(item, values, n_splits=20)
    assert r == pytest.approx(833.3 / (833.3 + 400), abs=0.03)
    assert sb == pytest.approx(2 * r / (1 + r))
    res = agreement(item, rater, values)
    assert res.icc_model == "ICC(1,1)"
    assert res.icc == pytest.approx(r, abs=0.03)  # one-way ICC estimates the same quantity


def test_leave_one_out_and_ceiling() -> None:
    rng = np.random.default_rng(2)
    truth = rng.uniform(0, 100, 100)
    matrix = truth[:, None] + rng.normal(0, 10, (100, 3)) * np.array([1.0, 1.0, 5.0])
    item, rater, values = _long(matrix)
    res = agreement(item, rater, values, rater_names=["a", "b", "noisy"])
    for k, name in enumerate(["a", "b", "noisy"]):
        others = np.delete(matrix, k, axis=1).mean(axis=1)
        assert res.loo[name]["r"] == pytest.approx(stats.pearsonr(matrix[:, k], others)[0])
        assert res.loo[name]["n"] == 100
    assert res.loo["noisy"]["r"] < res.loo["a"]["r"]
    assert res.reliability == pytest.approx(res.spearman_brown)
    assert res.ceiling == pytest.approx(np.sqrt(res.spearman_brown))
    # The mean of the raters cannot correlate with the truth much above the ceiling.
    observed = stats.pearsonr(matrix.mean(axis=1), truth)[0]
    assert observed <= res.ceiling + 0.05


def test_empty_and_single_rater_inputs_are_nan() -> None:
    res = agreement(np.array([], int), np.array([], int), np.array([]))
    assert res.n_ratings == 0 and np.isnan(res.alpha) and np.isnan(res.ceiling)
    one = agreement(np.arange(5), np.zeros(5, int), np.arange(5.0))
    assert np.isnan(one.alpha) and one.n_items_multi == 0


def _one_way_oracle(groups: list[np.ndarray], confidence: float = 0.95) -> dict[str, float]:
    """ICC(1) and its F interval from scipy's one-way ANOVA (Shrout & Fleiss 1979, Table 4;
    k0 = (N − Σk_i²/N)/(n − 1) for unequal group sizes)."""
    f = stats.f_oneway(*groups).statistic
    n, total = len(groups), sum(len(g) for g in groups)
    k0 = (total - sum(len(g) ** 2 for g in groups) / total) / (n - 1)
    tail = 1 - (1 - confidence) / 2
    f_low = f / stats.f.ppf(tail, n - 1, total - n)
    f_high = f * stats.f.ppf(tail, total - n, n - 1)
    return {
        "ICC(1,1)": (f - 1) / (f + k0 - 1),
        "ICC(1,1) low": (f_low - 1) / (f_low + k0 - 1),
        "ICC(1,1) high": (f_high - 1) / (f_high + k0 - 1),
        "ICC(1,k) low": 1 - 1 / f_low,
        "ICC(1,k) high": 1 - 1 / f_high,
    }


def test_one_way_icc_interval_matches_the_anova_f_interval() -> None:
    item, _, values = _long(SF_DATA)
    got = icc_one_way(item, values)
    oracle = _one_way_oracle([row for row in SF_DATA])
    for key, value in oracle.items():
        assert got[key] == pytest.approx(value, rel=1e-9), key
    assert got["ICC(1,1) low"] < SF_PUBLISHED["ICC(1,1)"] < got["ICC(1,1) high"]
    # Unequal numbers of ratings per item (an anonymous crowd file).
    rng = np.random.default_rng(3)
    truth = rng.normal(50, 15, 40)
    groups = [t + rng.normal(0, 10, rng.integers(2, 9)) for t in truth]
    item = np.concatenate([np.full(len(g), i) for i, g in enumerate(groups)])
    got = icc_one_way(item, np.concatenate(groups))
    for key, value in _one_way_oracle(groups).items():
        assert got[key] == pytest.approx(value, rel=1e-9), key


def test_anonymous_ratings_get_the_estimators_that_need_no_identity() -> None:
    rng = np.random.default_rng(5)
    truth = rng.uniform(0, 100, 60)
    sizes = rng.integers(2, 12, 60)
    item = np.repeat(np.arange(60), sizes)
    values = np.round(truth[item] + rng.normal(0, 12, item.size))
    anon = agreement(item, np.zeros(item.size, int), values, anonymous=np.ones(item.size, bool),
                     n_boot=300)  # fmt: skip
    slots = np.full((sizes.max(), 60), np.nan)
    for i in range(60):
        slots[: sizes[i], i] = values[item == i]
    oracle = krippendorff.alpha(reliability_data=slots, level_of_measurement="interval")
    assert anon.alpha == pytest.approx(oracle, rel=1e-9)
    assert anon.icc_model == "ICC(1,1)" and anon.n_annotators == 0
    assert anon.n_anonymous == item.size and anon.loo == {}
    assert "annotator vs leave-one-out mean" in anon.not_shown
    assert anon.alpha_ci[0] < anon.alpha < anon.alpha_ci[1]
    assert anon.icc_ci[0] < anon.icc < anon.icc_ci[1]
    assert anon.spearman_brown_ci[0] < anon.spearman_brown < anon.spearman_brown_ci[1]
    # Treated as one rater, the same values would wrongly give one annotator and no alpha
    # of "slots" — the anonymous path must not depend on the codes passed.
    again = agreement(item, np.arange(item.size), values, anonymous=np.ones(item.size, bool),
                      n_boot=300)  # fmt: skip
    assert again.alpha == anon.alpha and again.icc == anon.icc


def test_a_named_raters_repeats_count_once_in_agreement() -> None:
    item, rater, values = _long(SF_DATA)
    once = agreement(item, rater, values)
    # Rater 0 rates item 0 twice more, 8 and 10: their mean 9 is the value already there.
    twice = agreement(np.r_[item, 0, 0], np.r_[rater, 0, 0], np.r_[values, 8.0, 10.0])
    assert twice.n_ratings == once.n_ratings
    assert twice.alpha == pytest.approx(once.alpha)
    assert twice.icc_model == "ICC(2,1)" and twice.icc == pytest.approx(once.icc)
