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
  numbers in the same order as the row-by-row search, and give the same values.

Used by `metaeval_significance` for the perm-both, perm-items and perm-systems tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from meaningbench.analysis import metaeval_measures as mm

SWAP_MEASURES = (*mm.COUNT_MEASURES, "acc_eq_star")
CELLS = 8_000_000  # rows × candidates per block
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
    else:
        parts = list(mm.iter_pairs(groups))
        if parts:
            i, j, gid = (np.concatenate([p[k] for p in parts]) for k in range(3))
        else:
            i = j = gid = np.zeros(0, dtype=np.intp)
    if 4 * i.size > MAX_CANDIDATES:
        return None
    return SwapPairs(measure, i, j, gid, groups.n_groups, h[i] - h[j])


def swap_rows(sp: SwapPairs, u: np.ndarray, v: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """(2R,) the measure on the hybrid rows of R resamples: row r takes u where
    signs[r] > 0 and v elsewhere, row R + r the opposite (what `mid ± s·half` builds)."""
    r = signs.shape[0]
    p = sp.size
    if p == 0:
        return np.full(2 * r, np.nan)
    # candidate c = 2·(i takes v) + (j takes v); A' rows pick c, B' rows 3 − c
    dx = np.stack([u[sp.i] - u[sp.j], u[sp.i] - v[sp.j], v[sp.i] - u[sp.j], v[sp.i] - v[sp.j]])
    neg = signs < 0
    choice = 2 * neg[:, sp.i].astype(np.int8) + neg[:, sp.j].astype(np.int8)
    choice = np.concatenate([choice, 3 - choice])  # (2R, P)
    if sp.measure == "acc_eq_star":
        return _acc_eq_star_rows(sp, dx, choice)
    return _count_rows(sp, dx, choice)


def _count_rows(sp: SwapPairs, dx: np.ndarray, choice: np.ndarray) -> np.ndarray:
    ht = sp.dh == 0
    mt = dx == 0  # ε = 0: |Δ| ≤ 0
    agree = (np.sign(sp.dh) == np.sign(dx)) & ~ht & ~mt
    # outcome codes: 0 concordant, 1 discordant, 2 tied in humans only, 3 in the metric
    # only, 4 in both
    code = np.where(ht & mt, 4, np.where(mt, 3, np.where(ht, 2, np.where(agree, 0, 1))))
    b = choice.shape[0]
    g = sp.n_groups
    out = np.empty(b)
    rows = max(1, CELLS // max(sp.size, 1))
    cols = np.arange(sp.size)
    for r0 in range(0, b, rows):
        ch = choice[r0 : r0 + rows]
        k = ch.shape[0]
        picked = code[ch, cols[None, :]]  # (k, P)
        flat = (np.arange(k)[:, None] * g + sp.gid[None, :]) * 5 + picked
        counts = np.bincount(flat.ravel(), minlength=k * g * 5).reshape(k, g, 5)
        counts = counts.astype(np.float64)
        pc = mm.PairCounts(
            c=counts[..., 0], d=counts[..., 1], th=counts[..., 2], tm=counts[..., 3],
            thm=counts[..., 4],
        )  # fmt: skip
        out[r0 : r0 + k] = mm.from_counts(sp.measure, pc)
    return out


def _acc_eq_star_rows(sp: SwapPairs, dx: np.ndarray, choice: np.ndarray) -> np.ndarray:
    b, p = choice.shape
    if not sp.dh.any():  # humans tie every pair
        return np.full(b, np.nan)
    per_group = np.bincount(sp.gid, minlength=sp.n_groups).astype(np.float64)
    used = per_group > 0
    weight = 1.0 / (per_group[sp.gid] * used.sum())
    ad = np.abs(dx).ravel()  # candidate c of pair q at c·P + q
    pair_of = np.tile(np.arange(p), 4)
    order = np.lexsort((pair_of, ad))  # by |Δ|, ties in pair order (a stable sort's)
    rank = np.empty(4 * p, dtype=np.intp)
    rank[order] = np.arange(4 * p)
    dh = np.tile(sp.dh, 4)
    tie_w = np.where(dh == 0, np.tile(weight, 4), 0.0)[order]
    ord_w = np.where((dh != 0) & (np.sign(dh) == np.sign(dx.ravel())), np.tile(weight, 4), 0.0)
    ord_w = ord_w[order]
    ad_sorted = ad[order]
    out = np.empty(b)
    rows = max(1, CELLS // (4 * p))
    for r0 in range(0, b, rows):
        ch = choice[r0 : r0 + rows]
        k = ch.shape[0]
        mask = np.zeros((k, 4 * p), dtype=bool)
        mask[np.arange(k)[:, None], rank[ch.astype(np.intp) * p + np.arange(p)]] = True
        cols = np.nonzero(mask)[1].reshape(k, p)  # each row's chosen candidates, sorted
        ad_s, tie_s, ord_s = ad_sorted[cols], tie_w[cols], ord_w[cols]
        last = np.ones((k, p), dtype=bool)
        last[:, :-1] = ad_s[:, 1:] != ad_s[:, :-1]
        total = np.array([row.sum() for row in ord_s])  # as the row-by-row path sums
        acc = np.cumsum(tie_s, axis=1) + total[:, None] - np.cumsum(ord_s, axis=1)
        eps0 = ad_s[:, 0] > 0
        top = np.maximum(np.where(last, acc, -np.inf).max(axis=1), np.where(eps0, total, -np.inf))
        hit = last & (acc >= (top - 1e-12)[:, None])
        first = acc[np.arange(k), np.argmax(hit, axis=1)]
        out[r0 : r0 + k] = np.where(eps0 & (total >= top - 1e-12), total, first)
    return out
