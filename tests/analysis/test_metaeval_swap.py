"""The permutation resamples of the pairwise measures from each pair's four possible
differences (`metaeval_swap`) equal the measure recomputed on every resampled row
(`metaeval_measures`): bit for bit for the counted measures, to 1e-12 for acc*_eq (its
sums run in another order), and the ranking's p-values do not change."""

from __future__ import annotations

import numpy as np
import pytest

from meaningbench.analysis import metaeval_significance as sig
from meaningbench.analysis.metaeval import MetaEvalData
from meaningbench.analysis.metaeval_swap import SWAP_MEASURES, swap_rows


def _data(seed: int = 2, s: int = 7, n: int = 9, metrics: int = 3) -> MetaEvalData:
    rng = np.random.default_rng(seed)
    h = rng.integers(1, 6, s * n).astype(float)  # ties in the humans
    x = np.column_stack(
        [np.round(h + rng.normal(0, sd, s * n), 0) for sd in np.linspace(0.5, 3, metrics)]
    )  # and in the metrics
    return MetaEvalData(
        h,
        x,
        [f"m{k}" for k in range(metrics)],
        np.repeat([f"s{k}" for k in range(s)], n).astype(object),
        np.tile([f"i{j}" for j in range(n)], s).astype(object),
    )


@pytest.mark.parametrize("group_by", ["none", "item", "per-system"])
@pytest.mark.parametrize("measure", SWAP_MEASURES)
def test_swap_rows_equal_the_rows_recomputed(measure: str, group_by: str) -> None:
    data = _data()
    stat = sig._Stat(data, measure, group_by, 5.0, None)
    assert stat.swap is not None
    z = sig._standardise(data.metrics)
    rng = np.random.default_rng(9)
    signs = np.where(rng.random((40, data.n)) > 0.5, -1.0, 1.0)
    signs[0] = 1.0  # the observed pairing
    for i, j in [(0, 1), (2, 0)]:
        mid = (z[:, i] + z[:, j]) / 2.0
        half = (z[:, i] - z[:, j]) / 2.0
        fast = swap_rows(stat.swap, mid + half, mid - half, signs)
        slow = stat.rows(np.concatenate([mid + signs * half, mid - signs * half]))
        if measure == "acc_eq_star":  # the same sums, accumulated in another order
            np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
        else:  # whole counts
            np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("measure", ["acc_eq_star", "kendall_b"])
def test_ranking_pvalues_are_unchanged_by_the_fast_path(measure: str) -> None:
    data = _data(seed=4, metrics=4)
    fast = sig.rank_metrics(data, measure, group_by="item", resamples=60, intervals=False)

    class Slow(sig._Stat):
        def __init__(self, *args, **kw) -> None:
            super().__init__(*args, **kw)
            self.swap = None

    original = sig._Stat
    sig._Stat = Slow  # type: ignore[misc]
    try:
        slow = sig.rank_metrics(data, measure, group_by="item", resamples=60, intervals=False)
    finally:
        sig._Stat = original  # type: ignore[misc]
    np.testing.assert_array_equal(fast.p_values.to_numpy(), slow.p_values.to_numpy())


def test_spa_pvalues_equal_the_pair_by_pair_loop() -> None:
    from meaningbench.analysis import metaeval_measures as mm

    rng = np.random.default_rng(3)
    matrix = np.round(rng.normal(size=(9, 40)), 1)
    signs = mm.permutation_signs(4, 1000, 40)
    totals = matrix.sum(axis=1)
    null = signs @ matrix.T
    expected = np.full((9, 9), np.nan)
    for a in range(9):
        for b in range(a + 1, 9):
            obs = totals[a] - totals[b]
            expected[a, b] = float(np.mean(null[:, a] - null[:, b] >= obs - 1e-9 * abs(obs)))
    np.testing.assert_array_equal(mm.pairwise_system_pvalues(matrix, signs), expected)


def _spa_deltas_both_ways(data: MetaEvalData, test: str, early: bool) -> tuple[dict, dict]:
    from meaningbench.analysis.metaeval_pairs import EarlyStop

    stat = sig._Stat(data, "spa", "system", 5.0, None, seed=1)
    z = sig._standardise(data.metrics)
    sys_codes, src_codes = data.system_codes(), data.source_codes()
    if test == "perm-outputs":
        sys_codes, src_codes = np.arange(data.n), np.zeros(data.n, dtype=np.intp)
    a, b = sig._perm_signs(
        np.random.default_rng(5), test, 300, int(sys_codes.max()) + 1, int(src_codes.max()) + 1
    )
    signs = sig.Signs(a, b, sys_codes, src_codes)
    rule = EarlyStop() if early else None
    observed = np.array([float(v) for v in stat.rows(data.metrics.T)])
    fast = dict(sig._spa_deltas(stat, z, signs, rule, observed))
    slow = dict(sig._generic_deltas(stat, z, signs, rule, observed))
    return fast, slow


@pytest.mark.parametrize("test", ["perm-both", "perm-outputs", "perm-items"])
@pytest.mark.parametrize("early", [False, True])
def test_spa_resamples_from_shared_null_sums_equal_the_hybrids_recomputed(
    test: str, early: bool
) -> None:
    """SPA's resamples from every metric's null sums (`metaeval_spa`) are, bit for bit,
    those of each hybrid's own matrix product: on scores with ties, a metric repeated
    (its hybrids' rows equal) and two systems with the same scores."""
    data = _data(seed=6, s=6, n=12, metrics=4)
    data.metrics[:, 3] = data.metrics[:, 0]
    data.metrics[data.system_codes() == 1] = data.metrics[data.system_codes() == 0]
    fast, slow = _spa_deltas_both_ways(data, test, early)
    assert fast.keys() == slow.keys()
    for pair, delta in slow.items():
        np.testing.assert_array_equal(fast[pair], delta)


@pytest.mark.parametrize("group_by", ["none", "item", "per-system"])
def test_counted_swap_rows_with_uneven_groups(group_by: str) -> None:
    """Groups of different sizes, one of a single output (no pairs) among them: each
    group's triangle is read from its own outputs."""
    full = _data(seed=8, s=5, n=7)
    keep = np.ones(full.n, bool)
    # s0 loses sources i0..i3 and i6, s1 i2 and i6; i6 keeps s4's output only
    keep[[0, 1, 2, 3, 6, 9, 13, 20, 27]] = False
    data = full.subset(np.flatnonzero(keep))
    z = sig._standardise(data.metrics)
    rng = np.random.default_rng(2)
    signs = np.where(rng.random((70, data.n)) > 0.5, -1.0, 1.0)
    for measure in ("kendall_b", "tau_23", "acc_eq"):
        stat = sig._Stat(data, measure, group_by, 5.0, None)
        assert stat.swap is not None
        mid = (z[:, 0] + z[:, 2]) / 2.0
        half = (z[:, 0] - z[:, 2]) / 2.0
        fast = swap_rows(stat.swap, mid + half, mid - half, signs)
        slow = stat.rows(np.concatenate([mid + signs * half, mid - signs * half]))
        np.testing.assert_array_equal(fast, slow)


def test_counts_of_more_than_64_rows_at_once_equal_those_of_one_row_at_a_time() -> None:
    """The compiled count takes 64 rows a word: 130 rows (two whole words and two rows)
    count what each row's candidates are, row by row."""
    from meaningbench.analysis import metaeval_swap_kernels as kernels

    data = _data(seed=5, s=9, n=6)
    stat = sig._Stat(data, "kendall_b", "none", 5.0, None)  # one group of 54 outputs
    sp = stat.swap
    assert sp is not None and sp.members is not None
    rng = np.random.default_rng(1)
    code = rng.integers(0, 5, (4, sp.size)).astype(np.int8)
    packed = kernels.pack_outcomes(code)
    neg = (rng.random((130, data.n)) > 0.5).astype(np.uint8)
    together = kernels.count_rows(neg, sp.members, sp.mstart, sp.starts, packed)
    q = np.arange(sp.size)
    for r, row in enumerate(neg):
        c = 2 * row[sp.i].astype(int) + row[sp.j]
        np.testing.assert_array_equal(together[r, 0], np.bincount(code[c, q], minlength=5))
        np.testing.assert_array_equal(
            together[130 + r, 0], np.bincount(code[3 - c, q], minlength=5)
        )


@pytest.mark.parametrize("design", ["missing", "repeated"])
def test_spa_resamples_equal_the_hybrids_recomputed_off_the_one_output_per_cell_design(
    design: str,
) -> None:
    """A source without every system (left out of SPA's matrix) and two outputs of one
    system on one source (a cell's mean of two): the shared null sums still give the
    hybrids' own counts."""
    data = _data(seed=7, s=5, n=10, metrics=3)
    if design == "missing":
        data = data.subset(np.flatnonzero(np.arange(data.n) != 3))
    else:
        data = data.subset(np.r_[np.arange(data.n), 12])
        data.metrics[-1] += 1.0
    fast, slow = _spa_deltas_both_ways(data, "perm-outputs", False)
    for pair, delta in slow.items():
        np.testing.assert_array_equal(fast[pair], delta)
