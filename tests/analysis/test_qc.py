"""Rater QC on a real study file: Appraise's test for reliable and unreliable raters."""

from __future__ import annotations

import numpy as np
import pytest

from meaningbench.analysis.qc import appraise_test, study_qc, zscore
from tests.analysis.studybuild import add_items, add_ratings


def test_appraise_test_hand_computed() -> None:
    # Every degraded score below every original: U = 0, exact p = 1 / C(10, 5) = 1/252.
    p = appraise_test(np.array([1.0, 2, 3, 4, 5]), np.array([6.0, 7, 8, 9, 10]))
    assert p == pytest.approx(1 / 252)
    assert appraise_test(np.array([5.0, 6]), np.array([1.0, 2])) > 0.5
    assert appraise_test(np.array([3.0, 3]), np.array([3.0, 3])) == 1.0
    assert np.isnan(appraise_test(np.array([]), np.array([1.0])))


def test_zscore_sample_sd_and_constant() -> None:
    z = zscore(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(z, [-1.0, 0.0, 1.0])  # sample SD of 1, 2, 3 is 1
    np.testing.assert_allclose(zscore(np.array([4.0, 4.0])), [0.0, 0.0])


@pytest.fixture
def qc_study(new_study):
    regular = add_items(new_study, [(f"source {k} text", f"output {k}", "sys") for k in range(30)])
    degraded = add_items(
        new_study,
        [(f"source {k} text", f"output {k} broken", "sys") for k in range(12)],
        kind="control-degraded",
        parents=regular[:12],
    )
    identical = add_items(
        new_study,
        [(f"source {k} text", f"source {k} text", None) for k in range(3)],
        kind="control-identical",
        parents=regular[12:15],
    )
    unrelated = add_items(
        new_study,
        [(f"source {k} text", "zebra quantum harbour", None) for k in range(3)],
        kind="control-unrelated",
        parents=regular[15:18],
    )
    repeat = add_items(
        new_study,
        [(f"source {k} text", f"output {k}", "sys") for k in range(4)],
        kind="control-repeat",
        parents=regular[:4],
    )
    return new_study, regular, degraded, identical, unrelated, repeat


def _rate_reliable(study, name, regular, degraded, identical, unrelated, repeat, rng) -> dict:
    values = {i: float(rng.uniform(55, 95)) for i in regular}
    for d, parent in zip(degraded, regular[:12], strict=True):
        values[d] = values[parent] - 35 + float(rng.normal(0, 5))
    values.update({i: float(rng.uniform(95, 100)) for i in identical})
    values.update({i: float(rng.uniform(0, 5)) for i in unrelated})
    for r, parent in zip(repeat, regular[:4], strict=True):
        values[r] = values[parent] + 2.0
    durations = {i: 5000 + k for k, i in enumerate(values)}
    add_ratings(study, name, values, durations=durations)
    return values


def test_reliable_rater_passes_unreliable_fail(qc_study) -> None:
    study, regular, degraded, identical, unrelated, repeat = qc_study
    rng = np.random.default_rng(0)
    _rate_reliable(study, "careful", regular, degraded, identical, unrelated, repeat, rng)
    every = regular + degraded + identical + unrelated + repeat
    for k in range(10):
        values = {i: float(rng.uniform(0, 100)) for i in every}
        add_ratings(study, f"random{k}", values, durations={i: 800 for i in every})
    result = study_qc(study)
    careful = result.raters["careful"]
    assert careful.passed is True and careful.appraise_p < 0.05
    assert careful.degraded_pairs == 12
    assert careful.identical_n == 3 and careful.identical_mean >= 95
    assert careful.unrelated_n == 3 and careful.unrelated_mean <= 5
    assert careful.repeat_n == 4 and careful.repeat_mad == pytest.approx(2.0)
    assert careful.median_ms == pytest.approx(np.median([5000 + k for k in range(52)]))
    assert careful.fast_share == 0.0
    randoms = [result.raters[f"random{k}"] for k in range(10)]
    assert sum(r.passed is False for r in randoms) >= 8  # a random rater passes 5% of the time
    assert all(r.fast_share == 1.0 and r.median_ms == 800 for r in randoms)
    js = result.to_json()
    assert js["annotators"]["careful"]["status"] == "pass"
    assert set(result.to_frame().index) == {"careful", *(f"random{k}" for k in range(10))}


def test_rater_without_degraded_pairs_is_not_judged(qc_study) -> None:
    study, regular, *_ = qc_study
    add_ratings(study, "only-regular", {i: 50.0 for i in regular})
    rater = study_qc(study).raters["only-regular"]
    assert rater.passed is None and rater.status == "n/a" and rater.degraded_pairs == 0
    assert np.isnan(rater.median_ms)
