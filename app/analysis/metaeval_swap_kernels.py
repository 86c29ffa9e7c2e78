"""Compiled inner loops of the permutation resamples of the pairwise measures
(`metaeval_swap`): one pass over a resample's pairs, for both hybrid rows at once.

A resample gives each pair one of its four candidate differences (`metaeval_swap`
explains why); hybrid A' takes candidate c and hybrid B' takes 3 − c. In numpy every
resample row had to gather, mask and compact arrays four times the number of pairs, a
dozen passes over memory per row; here each row is a loop that touches each pair (counts)
or each candidate (acc*_eq) once, and the two hybrids share it.

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
    return {"count_rows": _count_kernel(jit), "acc_eq_star_rows": _acc_eq_star_kernel(jit)}


def _count_kernel(jit: Jit) -> Kernel:
    @jit
    def count_rows(
        neg: np.ndarray,  # (k, n) uint8: output takes B's score in A'
        i: np.ndarray,  # (P,) int32, the pairs group by group
        j: np.ndarray,
        starts: np.ndarray,  # (G + 1,) where each group's pairs begin
        code: np.ndarray,  # (P, 4) outcome code of each pair's candidates, 0..4
        out: np.ndarray,  # (2k, G, 5) A' rows then B' rows
    ) -> None:
        k = neg.shape[0]
        n_groups = starts.size - 1
        for r in range(k):
            row = neg[r]
            for g in range(n_groups):
                a = np.zeros(5, np.int32)
                b = np.zeros(5, np.int32)
                for q in range(starts[g], starts[g + 1]):
                    c = 2 * row[i[q]] + row[j[q]]
                    a[code[q, c]] += 1
                    b[code[q, 3 - c]] += 1
                for t in range(5):
                    out[r, g, t] = a[t]
                    out[k + r, g, t] = b[t]

    return count_rows


def _acc_eq_star_kernel(jit: Jit) -> Kernel:
    @jit
    def _first_within(kept: np.ndarray, n: int, top: float) -> float:
        """The value at the smallest ε within 1e-12 of the best."""
        for b in range(n):
            if kept[b] >= top - 1e-12:
                return float(kept[b])
        return np.nan

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
            out[r] = _first_within(kept_a, n_a, top_a)
            out[k + r] = _first_within(kept_b, n_b, top_b)

    return acc_eq_star_rows


def count_rows(
    neg: np.ndarray,
    i: np.ndarray,
    j: np.ndarray,
    gid: np.ndarray,
    code: np.ndarray,
    n_groups: int,
) -> np.ndarray:
    """(2k, G, 5) pair counts by outcome of A' rows then B' rows; the pairs come group by
    group (`gid` sorted), as `metaeval_measures.iter_pairs` makes them."""
    starts = np.searchsorted(gid, np.arange(n_groups + 1))
    out = np.empty((2 * neg.shape[0], n_groups, 5))
    _kernels()["count_rows"](
        neg,
        i.astype(np.int32),
        j.astype(np.int32),
        starts,
        np.ascontiguousarray(code.T),
        out,
    )
    return out


def acc_eq_star_rows(
    neg: np.ndarray, i: np.ndarray, j: np.ndarray, candidates: tuple[np.ndarray, ...]
) -> np.ndarray:
    """(2k,) acc*_eq of A' rows then B' rows; `candidates` as `acc_eq_star_rows` of the
    compiled kernels takes them, from cand_pair to ord_by_pair."""
    out = np.empty(2 * neg.shape[0])
    _kernels()["acc_eq_star_rows"](neg, i, j, *candidates, out)
    return out
