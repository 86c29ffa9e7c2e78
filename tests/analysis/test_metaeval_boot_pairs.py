"""BOOT-BOTH resamples of the pairwise measures from weighted pair counts
(meaningbench.analysis.metaeval_boot_pairs) equal the resample-by-resample path's."""

from __future__ import annotations

import numpy as np
import pytest

from meaningbench.analysis import metaeval_significance as ms
from meaningbench.analysis.metaeval import MetaEvalData
from meaningbench.analysis.metaeval_boot_pairs import BOOT_MEASURES, boot_pair_samples


def _data(seed: int, *, n_sys: int = 6, n_src: int = 8, human_ties: bool = False) -> MetaEvalData:
    rng = np.random.default_rng(seed)
    systems = np.repeat([f"s{k}" for k in range(n_sys)], n_src)
    sources = np.tile([f"j{k}" for k in range(n_src)], n_sys)
    keep = rng.random(systems.size) > 0.2  # some outputs missing
    human = np.round(rng.normal(size=systems.size) * 2)  # many ties
    if human_ties:
        human = np.zeros(systems.size)
    metrics = np.column_stack(
        [
            np.round(rng.normal(size=systems.size) * 3) / 2,  # ties in the metric too
            human + rng.normal(size=systems.size),
            human.copy(),  # ties exactly where the humans tie
        ]
    )
    return MetaEvalData(
        human=human[keep],
        metrics=metrics[keep],
        metric_names=["coarse", "noisy", "exact"],
        systems=np.array(systems[keep], dtype=object),
        sources=np.array(sources[keep], dtype=object),
    )


def _draws(data: MetaEvalData, seed: int, resamples: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for codes in (data.system_codes(), data.source_codes()):
        k = int(codes.max()) + 1
        drawn = rng.integers(0, k, (resamples, k))
        out.append(np.stack([np.bincount(d, minlength=k) for d in drawn]))
    return out[0], out[1]


@pytest.mark.parametrize("measure", BOOT_MEASURES)
@pytest.mark.parametrize("group_by", ["item", "per-system"])
@pytest.mark.parametrize("seed", [0, 1])
def test_equals_the_resample_by_resample_path(measure: str, group_by: str, seed: int) -> None:
    data = _data(seed)
    stat = ms._Stat(data, measure, group_by, 0.0, None, seed=0)
    cs, cj = _draws(data, seed + 10, 40)
    codes = (data.system_codes(), data.source_codes())
    fast = boot_pair_samples(measure, group_by, data.human, data.metrics, codes, (cs, cj))
    assert fast is not None
    slow = np.stack([ms.resample_values(stat, data.metrics, cs[r], cj[r]) for r in range(40)])
    assert np.isfinite(slow).any()
    np.testing.assert_allclose(fast, slow, atol=1e-12, rtol=0)
    assert (np.isnan(fast) == np.isnan(slow)).all()


@pytest.mark.parametrize("measure", ["acc_eq_star", "kendall_b", "acc_eq"])
def test_undefined_where_the_resample_path_is(measure: str) -> None:
    data = _data(3, human_ties=True)
    stat = ms._Stat(data, measure, "item", 0.0, None, seed=0)
    cs, cj = _draws(data, 4, 10)
    codes = (data.system_codes(), data.source_codes())
    fast = boot_pair_samples(measure, "item", data.human, data.metrics, codes, (cs, cj))
    slow = np.stack([ms.resample_values(stat, data.metrics, cs[r], cj[r]) for r in range(10)])
    assert fast is not None
    assert (np.isnan(fast) == np.isnan(slow)).all()
    np.testing.assert_allclose(fast[~np.isnan(fast)], slow[~np.isnan(slow)], atol=1e-12)


def test_other_measures_and_groupings_take_the_resample_path() -> None:
    data = _data(0)
    codes = (data.system_codes(), data.source_codes())
    draws = _draws(data, 0, 3)
    assert boot_pair_samples("pdp", "item", data.human, data.metrics, codes, draws) is None
    assert boot_pair_samples("acc_eq", "none", data.human, data.metrics, codes, draws) is None


def test_bootstrap_samples_use_it_with_the_same_draws() -> None:
    data = _data(5)
    stat = ms._Stat(data, "acc_eq_star", "item", 0.0, None, seed=0)
    got = ms.bootstrap_samples(stat, data.metrics, 30, seed=7)
    # The same seed's draws, as bootstrap_samples makes them, one resample at a time.
    rng = np.random.default_rng(7)
    n_sys = int(data.system_codes().max()) + 1
    n_src = int(data.source_codes().max()) + 1
    ds, dj = rng.integers(0, n_sys, (30, n_sys)), rng.integers(0, n_src, (30, n_src))
    for r in range(30):
        cs, cj = np.bincount(ds[r], minlength=n_sys), np.bincount(dj[r], minlength=n_src)
        np.testing.assert_allclose(
            got[r], ms.resample_values(stat, data.metrics, cs, cj), atol=1e-12
        )
