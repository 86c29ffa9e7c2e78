"""Compiled inner loops of the permutation resamples of the pairwise measures
(`metaeval_swap`): one pass over a resample's pairs, for both hybrid rows at once.

A resample gives each pair one of its four candidate differences (`metaeval_swap`
explains why); hybrid A' takes candidate c and hybrid B' takes 3 − c. In numpy every
resample row had to gather, mask and compact arrays four times the number of pairs, a
dozen passes over memory per row; here each row is a loop that touches each candidate
(acc*_eq) once, and the two hybrids share it. The counts go further: 64 rows share one
pass over the pairs, each row one bit of a word (`count_rows` says how).

SPA's resamples count, for every resampled metric and pair of systems, the source sign
flips under which the systems' difference is at least the observed one: one loop per pair
over the flips, instead of a boolean (pairs, flips) array per resampled metric.

BOOT-BOTH's acc*_eq (`metaeval_boot_pairs`) walks each metric's pairs, sorted once, with
each resample's weights: one pass per resample where numpy built a dozen (resamples,
pairs) arrays.

numba compiles these on first use (and caches them beside this file); they release the
GIL, so `metaeval_swap` runs blocks of rows on the analysis thread pool.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

Kernel = Callable[..., Any]
Jit = Callable[[Kernel], Kernel]

_compiled: dict[str, Any] = {}
_compiling = threading.Lock()  # the pool's threads may all ask at once


def _kernels() -> dict[str, Any]:
    with _compiling:
        if not _compiled:
            _compiled.update(_compile())
    return _compiled


def _compile() -> dict[str, Any]:
    from numba import njit  # a second or two on first import; only rankings need it

    jit: Jit = njit(cache=True, nogil=True)
    return {
        "count_rows": _count_kernel(jit),
        "acc_eq_star_rows": _acc_eq_star_kernel(jit),
        "spa_hits": _spa_kernel(jit),
        "spa_pair_hits": _spa_pair_kernel(jit),
        "boot_acc_eq_star": _boot_acc_kernel(jit),
    }


def _count_kernel(jit: Jit) -> Kernel:
    @jit
    def count_rows(
        words: np.ndarray,  # (n,) uint64: bit r set where row r's output takes B's in A'
        rows: int,  # rows in the words (≤ 64)
        members: np.ndarray,  # (n,) int32 the outputs group by group
        mstart: np.ndarray,  # (G + 1,) where each group's outputs begin
        starts: np.ndarray,  # (G + 1,) where each group's pairs begin
        packed: np.ndarray,  # (P,) uint16 outcome code (0..4) of candidate c at bits 4c
        n_planes: int,  # bits of the largest count of a group
        out: np.ndarray,  # (2 · rows, G, 5) A' rows then B' rows
    ) -> None:
        # 64 rows at a time, one bit each: an output's swap bits are one word, a pair's
        # candidate c is chosen on the rows of one mask, and each count is a column of
        # bits added into `n_planes` words (a carry chain), so one pass over a group's
        # pairs counts 64 rows. A group's pairs are its outputs' upper triangle.
        planes = np.zeros((2, 5, n_planes), np.uint64)  # A' and B'
        chosen = np.zeros((2, 5), np.uint64)
        one = np.uint64(1)
        if rows > 0:
            for g in range(starts.size - 1):
                m0 = mstart[g]
                size = mstart[g + 1] - m0
                planes[:] = 0
                q = starts[g]
                for a in range(size - 1):
                    wa = words[members[m0 + a]]
                    for b in range(a + 1, size):
                        wb = words[members[m0 + b]]
                        code = packed[q]
                        q += 1
                        chosen[:] = 0
                        for c in range(4):  # c = 2·(a takes B's) + (b takes B's)
                            mask = (wa if c >= 2 else ~wa) & (wb if c & 1 else ~wb)
                            chosen[0, (code >> (4 * c)) & 7] |= mask
                            chosen[1, (code >> (4 * (3 - c))) & 7] |= mask
                        for side in range(2):
                            for t in range(5):
                                carry = chosen[side, t]
                                p = 0
                                while carry:
                                    x = planes[side, t, p] & carry
                                    planes[side, t, p] ^= carry
                                    carry = x
                                    p += 1
                for t in range(5):
                    for r in range(rows):
                        ca = cb = 0
                        for p in range(n_planes):
                            ca += int((planes[0, t, p] >> np.uint64(r)) & one) << p
                            cb += int((planes[1, t, p] >> np.uint64(r)) & one) << p
                        out[r, g, t] = ca
                        out[rows + r, g, t] = cb

    return count_rows


def _acc_eq_star_kernel(jit: Jit) -> Kernel:
    @jit
    def acc_eq_star_rows(
        neg: np.ndarray,  # (k, n) uint8
        i: np.ndarray,
        j: np.ndarray,
        cand_pair: np.ndarray,  # (4P,) int32 pair of each candidate, in |Δ| order
        cand_combo: np.ndarray,  # (4P,) uint8 which of the pair's four it is
        tie_w: np.ndarray,  # (4P,) weight where the humans tie the pair, else 0
        ord_w: np.ndarray,  # (4P,) weight where the candidate orders as the humans do
        run_end: np.ndarray,  # (4P,) last candidate of a run of equal |Δ|
        zero_first: bool,  # the smallest |Δ| of all candidates is 0
        ord_by_pair: np.ndarray,  # (4, P) weight where the candidate orders as the humans
        out: np.ndarray,  # (2k,)
    ) -> None:
        k = neg.shape[0]
        p = i.size
        m = cand_pair.size
        choice = np.empty(p, np.uint8)
        kept_a = np.empty(m + 1)
        kept_b = np.empty(m + 1)
        for r in range(k):
            row = neg[r]
            total_a = total_b = 0.0
            for q in range(p):
                c = 2 * row[i[q]] + row[j[q]]
                choice[q] = c
                total_a += ord_by_pair[c, q]
                total_b += ord_by_pair[3 - c, q]
            # A run's ε ties every candidate up to it. A run none of whose candidates
            # this row chose repeats the last value (or, before any, ε = 0's plain
            # ordering): evaluating it changes nothing, and saves a branch per candidate.
            top_a = top_b = -np.inf
            n_a = n_b = 0
            if not zero_first:  # ε = 0 ties nothing: plain ordering accuracy
                top_a, top_b = total_a, total_b
                kept_a[0], kept_b[0] = total_a, total_b
                n_a = n_b = 1
            tie_a = ord_a = tie_b = ord_b = 0.0
            for t in range(m):
                c = choice[cand_pair[t]]
                a = 1.0 if c == cand_combo[t] else 0.0
                b = 1.0 if 3 - c == cand_combo[t] else 0.0
                tie_a += a * tie_w[t]
                ord_a += a * ord_w[t]
                tie_b += b * tie_w[t]
                ord_b += b * ord_w[t]
                if run_end[t]:
                    acc = tie_a + total_a - ord_a
                    top_a = max(top_a, acc)
                    if acc >= top_a - 1e-12:
                        kept_a[n_a] = acc
                        n_a += 1
                    acc = tie_b + total_b - ord_b
                    top_b = max(top_b, acc)
                    if acc >= top_b - 1e-12:
                        kept_b[n_b] = acc
                        n_b += 1
            # The value at the smallest ε within 1e-12 of the best (inline: a nested
            # jitted helper makes numba's cache miss, and every process compile again).
            out[r] = out[k + r] = np.nan
            for t in range(n_a):
                if kept_a[t] >= top_a - 1e-12:
                    out[r] = kept_a[t]
                    break
            for t in range(n_b):
                if kept_b[t] >= top_b - 1e-12:
                    out[k + r] = kept_b[t]
                    break

    return acc_eq_star_rows


def _spa_kernel(jit: Jit) -> Kernel:
    @jit
    def spa_hits(
        null: np.ndarray,  # (B, S, Q) Σ flip · score per system under each flip
        totals: np.ndarray,  # (B, S) Σ score per system
        out: np.ndarray,  # (B, S(S − 1)/2) int64, pairs (a, b), a < b, row by row
    ) -> None:
        n_rows, s, q_n = null.shape
        for r in range(n_rows):
            p = 0
            for a in range(s - 1):
                for b in range(a + 1, s):
                    observed = totals[r, a] - totals[r, b]
                    floor = observed - 1e-9 * abs(observed)
                    hits = 0
                    for q in range(q_n):
                        hits += null[r, a, q] - null[r, b, q] >= floor
                    out[r, p] = hits
                    p += 1

    return spa_hits


def _spa_pair_kernel(jit: Jit) -> Kernel:
    @jit
    def spa_pair_hits(
        base: np.ndarray,  # (P0, S, Q) null sums of each pair's mean scores
        nulls: np.ndarray,  # (M, k, S, Q) null sums of each metric's signed scores
        totals: np.ndarray,  # (P, 2k, S) sums per system of hybrid A's matrices, then B's
        slack: np.ndarray,  # (P0, S) bound on each system's rounding in a null sum
        pi: np.ndarray,  # (P,) each pair's first metric in `nulls`
        pj: np.ndarray,  # (P,) its second
        pb: np.ndarray,  # (P,) its row in `base` and `slack`
        out: np.ndarray,  # (P, 2k, S(S − 1)/2) int64
        unsure: np.ndarray,  # (P, 2k) bool: a flip within rounding of its pair's floor
    ) -> None:
        k = nulls.shape[1]
        s, q_n = base.shape[1], base.shape[2]
        # Each hybrid's null sums per system first (one pass over the two metrics' sums),
        # so the loop over pairs of systems reads two rows and counts without branching: a
        # flip is unsure when it lands in [floor − near, floor + near], i.e. when the counts
        # above the band's two ends differ; elsewhere the count above its top is the hits.
        hyb = np.empty((2, s, q_n))
        for t in range(pi.size):
            bt, ci, cj = base[pb[t]], nulls[pi[t]], nulls[pj[t]]
            for r in range(k):
                for a in range(s):
                    for q in range(q_n):
                        half = 0.5 * (ci[r, a, q] - cj[r, a, q])
                        hyb[0, a, q] = bt[a, q] + half
                        hyb[1, a, q] = bt[a, q] - half
                for side in range(2):
                    row = side * k + r
                    p = 0
                    for a in range(s - 1):
                        for b in range(a + 1, s):
                            obs = totals[t, row, a] - totals[t, row, b]
                            floor = obs - 1e-9 * abs(obs)
                            near = slack[pb[t], a] + slack[pb[t], b]
                            low, high = floor - near, floor + near
                            above_low = above_high = 0
                            for q in range(q_n):
                                x = hyb[side, a, q] - hyb[side, b, q]
                                above_low += x >= low
                                above_high += x > high
                            out[t, row, p] = above_high
                            if above_low != above_high:
                                unsure[t, row] = True
                            p += 1

    return spa_pair_hits


def spa_pair_hits(
    base: np.ndarray,
    nulls: np.ndarray,
    totals: np.ndarray,
    slack: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """`spa_hits` of the two hybrids of k resamples of each pair of metrics (`pairs`: the
    two metrics' rows in `nulls` and the pair's row in `base`), their null sums given as
    base ± ½(nulls_i − nulls_j) (`metaeval_spa` says why): (P, 2k, S(S − 1)/2) counts, and
    (P, 2k) whether a row had a flip within rounding (`slack`) of a pair's floor, where
    only the hybrid's own product can say which side it falls on. One call for many pairs:
    a call per pair cost more in Python than the counting on 10,000 outputs."""
    pi, pj, pb = pairs
    s = base.shape[1]
    out = np.empty((pi.size, totals.shape[1], s * (s - 1) // 2), np.int64)
    unsure = np.zeros((pi.size, totals.shape[1]), np.bool_)
    _kernels()["spa_pair_hits"](base, nulls, totals, slack, pi, pj, pb, out, unsure)
    return out, unsure


def _boot_acc_kernel(jit: Jit) -> Kernel:
    @jit
    def boot_acc_eq_star(
        m: np.ndarray,  # (k, n) multiplicity of each output per resample
        scale: np.ndarray,  # (k, G) share of one pair of each group copy
        const: np.ndarray,  # (k,) the self-pairs' share (ties at every ε)
        pi: np.ndarray,  # (P,) the pairs' outputs and groups, sorted by |Δ|
        pj: np.ndarray,
        pg: np.ndarray,
        tie: np.ndarray,  # (P,) the humans tie the pair
        ordered: np.ndarray,  # (P,) the metric orders the pair as the humans do
        last: np.ndarray,  # (P,) last pair of a run of equal |Δ|
        zeros: int,  # pairs with Δ = 0
        out: np.ndarray,  # (k,)
    ) -> None:
        p_n = pi.size
        w = np.empty(p_n)
        acc = np.empty(p_n)
        for r in range(m.shape[0]):
            total = 0.0
            for t in range(p_n):
                w[t] = m[r, pi[t]] * m[r, pj[t]] * scale[r, pg[t]]
                if ordered[t]:
                    total += w[t]
            zero_ties = 0.0
            for t in range(zeros):
                if tie[t]:
                    zero_ties += w[t]
            acc0 = const[r] + total + zero_ties
            top = acc0
            n_acc = 0
            cum_tie = cum_ord = 0.0
            for t in range(p_n):
                if tie[t]:
                    cum_tie += w[t]
                if ordered[t]:
                    cum_ord += w[t]
                if last[t]:
                    a = (cum_tie + (total - cum_ord)) + const[r]
                    acc[n_acc] = a
                    n_acc += 1
                    top = max(top, a)
            value = acc0
            if acc0 < top - 1e-12:
                for t in range(n_acc):
                    if acc[t] >= top - 1e-12:
                        value = acc[t]
                        break
            out[r] = value

    return boot_acc_eq_star


def boot_acc_eq_star(
    m: np.ndarray, scale: np.ndarray, const: np.ndarray, sorted_pairs: tuple[Any, ...]
) -> np.ndarray:
    """(k,) acc*_eq of k BOOT-BOTH resamples of one metric; `sorted_pairs` are the pairs'
    outputs i, j, group, human tie, metric order and run end, sorted by |Δ|, then how
    many have Δ = 0 (as `metaeval_boot_pairs` builds them)."""
    out = np.empty(m.shape[0])
    _kernels()["boot_acc_eq_star"](
        np.ascontiguousarray(m), np.ascontiguousarray(scale), const, *sorted_pairs, out
    )
    return out


def spa_hits(null: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """(B, S(S − 1)/2) how many flips q give null[r, a, q] − null[r, b, q] at least the
    observed totals[r, a] − totals[r, b] (less a relative 1e-9, for rounding), for
    every row r and pair of systems a < b in `np.triu_indices` order."""
    s = null.shape[1]
    out = np.empty((null.shape[0], s * (s - 1) // 2), np.int64)
    _kernels()["spa_hits"](np.ascontiguousarray(null), np.ascontiguousarray(totals), out)
    return out


def count_rows(
    neg: np.ndarray,
    members: np.ndarray,
    mstart: np.ndarray,
    starts: np.ndarray,
    packed: np.ndarray,
) -> np.ndarray:
    """(2k, G, 5) pair counts by outcome of A' rows then B' rows of `neg` (k, n) uint8
    (1: the output takes B's score in A'). The pairs are each group's upper triangle of
    its `members` (from `mstart`), group by group (from `starts`), as
    `metaeval_measures.iter_pairs` makes them; `packed` (P,) holds the outcome of each
    pair's candidate c at bits 4c (`pack_outcomes`)."""
    k = neg.shape[0]
    out = np.empty((2 * k, starts.size - 1, 5))
    n_planes = max(1, int(np.diff(starts).max(initial=0)).bit_length())
    for r0 in range(0, k, 64):
        rows = min(64, k - r0)
        part = np.empty((2 * rows, starts.size - 1, 5))
        _kernels()["count_rows"](
            row_words(neg[r0 : r0 + rows]), rows, members, mstart, starts, packed, n_planes, part
        )
        out[r0 : r0 + rows], out[k + r0 : k + r0 + rows] = part[:rows], part[rows:]
    return out


def row_words(neg: np.ndarray) -> np.ndarray:
    """(n,) uint64: bit r of output o's word is neg[r, o], for up to 64 rows."""
    bytes_ = np.zeros((8, neg.shape[1]), np.uint8)
    packed = np.packbits(neg, axis=0, bitorder="little")
    bytes_[: packed.shape[0]] = packed
    return np.ascontiguousarray(bytes_.T).view("<u8")[:, 0].astype(np.uint64)


def pack_outcomes(code: np.ndarray) -> np.ndarray:
    """(P,) uint16: the (4, P) outcome codes (0..4) of each pair's candidates, c at 4c."""
    c16 = code.astype(np.uint16)
    return np.ascontiguousarray(c16[0] | (c16[1] << 4) | (c16[2] << 8) | (c16[3] << 12))


def acc_eq_star_rows(
    neg: np.ndarray, i: np.ndarray, j: np.ndarray, candidates: tuple[np.ndarray, ...]
) -> np.ndarray:
    """(2k,) acc*_eq of A' rows then B' rows; `candidates` as `acc_eq_star_rows` of the
    compiled kernels takes them, from cand_pair to ord_by_pair."""
    out = np.empty(2 * neg.shape[0])
    _kernels()["acc_eq_star_rows"](neg, i, j, *candidates, out)
    return out
