"""Permutation resamples of the pairwise measures (τ_a, τ_b, WMT23 τ, acc_eq, acc*_eq)
without building and recounting every resampled score row.

A permutation resample of two metrics A and B gives each output one of two standardised
scores: u = mid + half (A's) or v = mid − half (B's), where the hybrid A' takes u when the
output's swap sign is +1 and v otherwise and the hybrid B' the opposite. A pair of outputs
(i, j) can therefore only take one of four differences, u_i − u_j, u_i − v_j, v_i − u_j,
v_i − v_j, computed once per pair of metrics from the same floats the row-by-row path
subtracts. A resample is then a choice of one of the four per pair:

- τ_a, τ_b, WMT23 τ and acc_eq count the pairs of each outcome per group: each of the
  four candidates has its outcome fixed in advance, so a resample's counts are one
  `bincount`, exactly the integers the row-by-row count gives;
- acc*_eq searches ε over the resample's |differences| in increasing order (ties in pair
  order, as the stable sort of `metaeval_measures.acc_eq_star`). The four candidates of
  every pair are sorted once; a resample's order is the sorted list with the unchosen
  candidates left out, so no resample sorts. The cumulative sums then run over the same
  numbers in the same order as the row-by-row search; the values agree with it to 1e-12
  (the totals are summed in pair order, not numpy's pairwise order).

The loops over a resample's pairs are compiled (`metaeval_swap_kernels`) and run in blocks
of rows on the analysis thread pool.

Used by `metaeval_significance` for the perm-both, perm-items and perm-systems tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from meaningbench.analysis import metaeval_measures as mm
from meaningbench.analysis import metaeval_swap_kernels as kernels
from meaningbench.analysis.parallel import thread_map

SWAP_MEASURES = (*mm.COUNT_MEASURES, "acc_eq_star")
ROWS = 64  # resample rows per task on the analysis thread pool
MAX_CANDIDATES = 40_000_000  # beyond this (a global grouping of ~4,500 outputs) the old path


@dataclass(frozen=True)
class SwapPairs:
    """The compared pairs of one grouping, in the order the measure's own code uses."""

    measure: str
    i: np.ndarray
    j: np.ndarray
    gid: np.ndarray
    n_groups: int
    dh: np.ndarray  # human difference of each pair
    # counted measures: the outputs group by group, where each group's begin (G + 1), and
    # where each group's pairs begin: pairs are each group's upper triangle, in order
    members: np.ndarray | None = None
    mstart: np.ndarray | None = None
    starts: np.ndarray | None = None

    @property
    def size(self) -> int:
        return int(self.i.size)


def swap_pairs(h: np.ndarray, groups: mm.Groups, measure: str, seed: int) -> SwapPairs | None:
    """The pairs a resample of `measure` compares (None: the measure is not pairwise, or
    acc*_eq searches ε on a sample of the pairs, or there are too many pairs)."""
    if measure not in SWAP_MEASURES:
        return None
    if measure == "acc_eq_star":
        i, j, gid, sampled = mm._calibration_pairs(groups, seed)
        if sampled[0]:
            return None
        if 4 * i.size > MAX_CANDIDATES:
            return None
        return SwapPairs(measure, i, j, gid, groups.n_groups, h[i] - h[j])
    parts = list(mm.iter_pairs(groups))  # each group's upper triangle, group by group
    if parts:
        i, j, gid = (np.concatenate([p[k] for p in parts]) for k in range(3))
    else:
        i = j = gid = np.zeros(0, dtype=np.intp)
    if 4 * i.size > MAX_CANDIDATES:
        return None
    members = groups.members()
    sizes = np.array([m.size for m in members], dtype=np.int64)
    return SwapPairs(
        measure,
        i,
        j,
        gid,
        groups.n_groups,
        h[i] - h[j],
        np.concatenate(members).astype(np.int32) if members else np.zeros(0, np.int32),
        np.r_[0, np.cumsum(sizes)],
        np.r_[0, np.cumsum(sizes * (sizes - 1) // 2)],
    )


def swap_rows(sp: SwapPairs, u: np.ndarray, v: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """(2R,) the measure on the hybrid rows of R resamples: row r takes u where
    signs[r] > 0 and v elsewhere, row R + r the opposite (what `mid ± s·half` builds)."""
    return swap_rows_of(sp, u, v)(np.ascontiguousarray(signs < 0, dtype=np.uint8))


def swap_rows_of(sp: SwapPairs, u: np.ndarray, v: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """`swap_rows` for one pair of metrics (u, v), block after block of resamples given
    as `neg` (R, n) uint8, 1 where signs < 0: what the pair's candidates need (acc*_eq
    sorts them) is made once, not once per block."""
    if sp.size == 0:
        return lambda neg: np.full(2 * neg.shape[0], np.nan)
    # candidate c = 2·(i takes v) + (j takes v); A' rows pick c, B' rows 3 − c
    dx = np.stack([u[sp.i] - u[sp.j], u[sp.i] - v[sp.j], v[sp.i] - u[sp.j], v[sp.i] - v[sp.j]])
    if sp.measure == "acc_eq_star":
        if not sp.dh.any():  # humans tie every pair
            return lambda neg: np.full(2 * neg.shape[0], np.nan)
        cand = _acc_candidates(sp, dx)

        def one(b: np.ndarray) -> np.ndarray:
            return np.asarray(kernels.acc_eq_star_rows(b, sp.i, sp.j, cand))
    else:
        code = kernels.pack_outcomes(_outcomes(sp, dx))

        def one(b: np.ndarray) -> np.ndarray:
            return _counted(sp, b, code)

    def rows(neg: np.ndarray) -> np.ndarray:
        parts = thread_map(one, [neg[r0 : r0 + ROWS] for r0 in range(0, neg.shape[0], ROWS)])
        # each block holds its A' rows then its B' rows
        halves = [(p[: p.size // 2], p[p.size // 2 :]) for p in parts]
        return np.concatenate([a for a, _ in halves] + [b for _, b in halves])

    return rows


def _outcomes(sp: SwapPairs, dx: np.ndarray) -> np.ndarray:
    """(4, P) outcome code of each candidate: 0 concordant, 1 discordant, 2 tied in the
    humans only, 3 in the metric only, 4 in both."""
    ht = sp.dh == 0
    mt = dx == 0  # ε = 0: |Δ| ≤ 0
    agree = (np.sign(sp.dh) == np.sign(dx)) & ~ht & ~mt
    code = np.where(ht & mt, 4, np.where(mt, 3, np.where(ht, 2, np.where(agree, 0, 1))))
    return np.ascontiguousarray(code, dtype=np.int8)


def _counted(sp: SwapPairs, neg: np.ndarray, packed: np.ndarray) -> np.ndarray:
    assert sp.members is not None and sp.mstart is not None and sp.starts is not None
    counts = kernels.count_rows(neg, sp.members, sp.mstart, sp.starts, packed)
    pc = mm.PairCounts(
        c=counts[..., 0], d=counts[..., 1], th=counts[..., 2], tm=counts[..., 3],
        thm=counts[..., 4],
    )  # fmt: skip
    return np.asarray(mm.from_counts(sp.measure, pc))


def _acc_candidates(sp: SwapPairs, dx: np.ndarray) -> tuple[Any, ...]:
    """The four candidates of every pair sorted once by |Δ| (ties in pair order, as the
    stable sort of `metaeval_measures.acc_eq_star`), with what each adds where chosen,
    in the order `metaeval_swap_kernels.acc_eq_star_rows` takes them."""
    p = sp.size
    per_group = np.bincount(sp.gid, minlength=sp.n_groups).astype(np.float64)
    used = per_group > 0
    weight = np.tile(1.0 / (per_group[sp.gid] * used.sum()), 4)
    ad = np.abs(dx).ravel()  # candidate c of pair q at c·P + q
    pair_of = np.tile(np.arange(p), 4)
    order = np.lexsort((pair_of, ad))
    dh = np.tile(sp.dh, 4)
    ord_w = np.where((dh != 0) & (np.sign(dh) == np.sign(dx.ravel())), weight, 0.0)
    ad_sorted = ad[order]
    tie_w = np.where(dh == 0, weight, 0.0)[order]
    # A candidate that neither ties where the humans tie nor orders as they do adds
    # nothing, and a run's value at its end is the last value again: left out, the
    # search sees the same values, without a quarter to half of the candidates.
    run = np.cumsum(np.r_[True, ad_sorted[1:] != ad_sorted[:-1]])
    keep = np.flatnonzero((tie_w != 0) | (ord_w[order] != 0))
    kept_run = run[keep]
    return (
        np.ascontiguousarray(pair_of[order][keep], dtype=np.int32),
        np.ascontiguousarray((order // p)[keep], dtype=np.uint8),
        np.ascontiguousarray(tie_w[keep]),
        np.ascontiguousarray(ord_w[order][keep]),
        np.r_[kept_run[1:] != kept_run[:-1], True],
        # ε = 0 is searched where a kept candidate has |Δ| = 0; else its plain ordering
        bool(keep.size and ad_sorted[keep[0]] == 0),
        np.ascontiguousarray(ord_w.reshape(4, p)),
    )
