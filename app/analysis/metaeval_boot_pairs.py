"""BOOT-BOTH resamples of the pairwise measures (τ_a, τ_b, WMT23 τ, acc_eq, acc*_eq)
grouped by item or by system, without building each resampled data set.

A BOOT-BOTH resample draws systems and sources with replacement: an output enters once
per draw of its system times per draw of its source. Grouped by item, each drawn copy of
a source is a group of its own, in which an output appears once per draw of its system
(grouped by system: each drawn copy of a system, its outputs once per draw of their
source). Call that multiplicity m_o. A group copy's pairs are then

- each pair (o, p) of distinct outputs of the original group, m_o·m_p times, with the
  outcome the scores give that pair once and for all;
- C(m_o, 2) pairs of an output with a copy of itself, tied in the humans and the metric;

and every copy of a group has the same value. So a resample's pair counts are weighted
sums over the original pairs, for a block of resamples at once: τ_a, τ_b, WMT23 τ and
acc_eq follow from them as from any counts, and acc*_eq searches its ε over the pairs
sorted once per metric by |difference|, the resample's weights summed along that order.
An ε between two differences present in a resample ties what the lower one ties, so the
smallest best ε over all the pairs' differences is one the resample has, as the
resample-by-resample search finds it.

Values equal those of `metaeval_significance.resample_values` on the same draws, up to
the order of floating-point sums. Used by `metaeval_significance.bootstrap_samples`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from meaningbench.analysis import metaeval_measures as mm
from meaningbench.analysis import metaeval_swap_kernels as kernels
from meaningbench.analysis.parallel import thread_map

BOOT_MEASURES = (*mm.COUNT_MEASURES, "acc_eq_star")
BOOT_GROUPINGS = ("item", "per-system")
CELLS = 4_000_000  # resamples × pairs per block
MAX_PAIRS = 5_000_000  # beyond this many original pairs, the resample-by-resample path


@dataclass(frozen=True)
class _Pairs:
    """Every pair of distinct outputs of one original group."""

    i: np.ndarray
    j: np.ndarray
    gid: np.ndarray
    group_of: np.ndarray  # original group per output
    n_groups: int
    dh: np.ndarray


def _pairs(h: np.ndarray, groups: mm.Groups) -> _Pairs:
    parts = list(mm.iter_pairs(groups))
    if parts:
        i, j, gid = (np.concatenate([p[k] for p in parts]) for k in range(3))
    else:
        i = j = gid = np.zeros(0, dtype=np.intp)
    return _Pairs(i, j, gid, groups.codes, groups.n_groups, h[i] - h[j])


def boot_pair_samples(
    measure: str,
    group_by: str,
    h: np.ndarray,
    x: np.ndarray,
    codes: tuple[np.ndarray, np.ndarray],
    counts: tuple[np.ndarray, np.ndarray],
) -> np.ndarray | None:
    """(R, M) `measure` of the metrics `x` (n, M) on R resamples in which system k is
    drawn counts[0][r, k] times and source j counts[1][r, j] times; `codes` are the
    outputs' system and source codes. NaN where a resample leaves it undefined; None
    where this path does not apply (another measure or grouping, too many pairs) or
    where acc*_eq would search ε on a sample of some resample's pairs."""
    if measure not in BOOT_MEASURES or group_by not in BOOT_GROUPINGS:
        return None
    sys_codes, src_codes = codes
    counts_s, counts_j = counts
    # The grouping's unit is drawn in copies; the other draw repeats outputs within one.
    outer, inner, c_out, c_in = (
        (src_codes, sys_codes, counts_j, counts_s)
        if group_by == "item"
        else (sys_codes, src_codes, counts_s, counts_j)
    )
    groups = mm.Groups.of(outer)
    pairs = _pairs(h, groups)
    if pairs.i.size > MAX_PAIRS:
        return None
    unit_of_group = np.zeros(groups.n_groups, dtype=np.intp)
    unit_of_group[groups.codes] = outer
    copies = c_out[:, unit_of_group]  # (R, G)
    multiplicity = c_in[:, inner]  # (R, n)
    rows = max(1, CELLS // max(pairs.i.size, x.shape[0], 1))
    starts = range(0, copies.shape[0], rows)
    dx = [x[pairs.i, m] - x[pairs.j, m] for m in range(x.shape[1])]

    def block_values(r0: int) -> np.ndarray | None:
        block = _Block.of(pairs, multiplicity[r0 : r0 + rows], copies[r0 : r0 + rows])
        if measure != "acc_eq_star":
            return np.column_stack([_counted(block, measure, d) for d in dx])
        if (block.resample_pairs > mm.CALIBRATION_PAIRS).any():
            return None  # ε would be searched on a sample of this resample's pairs
        return np.column_stack([_acc_eq_star(block, d) for d in dx])

    parts = thread_map(block_values, list(starts))
    done = [p for p in parts if p is not None]
    return np.concatenate(done) if len(done) == len(parts) else None


@dataclass(frozen=True)
class _Block:
    """The weights of a block of k resamples."""

    pairs: _Pairs
    weight: np.ndarray  # (k, P) times each pair occurs in one copy of its group
    selfish: np.ndarray  # (k, G) pairs of an output with its own copy, per group copy
    per_group: np.ndarray  # (k, G) all pairs of one group copy
    copies: np.ndarray  # (k, G)
    m: np.ndarray  # (k, n) times each output occurs in one copy of its group

    @classmethod
    def of(cls, pairs: _Pairs, m: np.ndarray, copies: np.ndarray) -> _Block:
        m = m.astype(np.float64)
        weight = m[:, pairs.i] * m[:, pairs.j]
        g = pairs.n_groups
        selfish = _by_group(m * (m - 1) / 2, pairs.group_of, g)
        per_group = _by_group(weight, pairs.gid, g) + selfish
        return cls(pairs, weight, selfish, per_group, copies.astype(np.float64), m)

    @property
    def resample_pairs(self) -> np.ndarray:
        return np.asarray((self.copies * self.per_group).sum(axis=1))

    def macro(self, per_group: np.ndarray) -> np.ndarray:
        """The average over the resample's group copies where the value is defined."""
        ok = np.isfinite(per_group) & (self.copies > 0)
        n = np.where(ok, self.copies, 0.0).sum(axis=1)
        total = np.where(ok, per_group * self.copies, 0.0).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def _by_group(values: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Sum over the last axis by group: (k, n) → (k, G)."""
    k = values.shape[0]
    if codes.size and (codes[1:] >= codes[:-1]).all():  # pairs come group by group
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        out = np.zeros((k, n_groups))
        out[:, codes[starts]] = np.add.reduceat(values, starts, axis=1)
        return out
    flat = (np.arange(k)[:, None] * n_groups + codes[None, :]).ravel()
    return np.bincount(flat, weights=values.ravel(), minlength=k * n_groups).reshape(k, n_groups)


def _counted(block: _Block, measure: str, dx: np.ndarray) -> np.ndarray:
    p = block.pairs
    ht = p.dh == 0
    mt = dx == 0  # ε = 0: |Δ| ≤ 0
    agree = (np.sign(p.dh) == np.sign(dx)) & ~ht & ~mt
    g = p.n_groups

    def count(mask: np.ndarray) -> np.ndarray:
        return _by_group(block.weight * mask, p.gid, g)

    counts = mm.PairCounts(
        c=count(agree),
        d=count(~ht & ~mt & ~agree),
        th=count(ht & ~mt),
        tm=count(mt & ~ht),
        thm=count(ht & mt) + block.selfish,
    )
    return block.macro(mm.group_values(measure, counts))


def _acc_eq_star(block: _Block, dx: np.ndarray) -> np.ndarray:
    p = block.pairs
    present = block.per_group > 0
    used = np.where(present, block.copies, 0.0).sum(axis=1)  # group copies with pairs
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(present, block.copies / block.per_group, 0.0) / used[:, None]
    scale = np.nan_to_num(scale, nan=0.0, posinf=0.0)
    const = (block.selfish * scale).sum(axis=1)  # self-pairs: ties at every ε
    if p.i.size == 0:
        return np.where(used > 0, const, np.nan)
    # Each pair's share of the macro average is multiplicity · multiplicity · scale; the
    # compiled loop runs the ε search below on those weights, resample by resample.
    ad = np.abs(dx)
    order = np.argsort(ad, kind="stable")
    ad_s = ad[order]
    sorted_pairs = (
        p.i[order].astype(np.int32),
        p.j[order].astype(np.int32),
        p.gid[order].astype(np.int32),
        (p.dh == 0)[order],
        ((p.dh != 0) & (np.sign(p.dh) == np.sign(dx)))[order],
        np.r_[ad_s[1:] != ad_s[:-1], True],
        int(np.searchsorted(ad_s, 0.0, side="right")),
    )
    value = kernels.boot_acc_eq_star(block.m, scale, const, sorted_pairs)
    # Undefined where the humans tie every pair the resample compares.
    split = (np.where(p.dh != 0, block.weight, 0.0)).sum(axis=1) > 0
    return np.where((used > 0) & split, value, np.nan)
