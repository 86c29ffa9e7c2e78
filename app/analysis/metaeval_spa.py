"""SPA's permutation resamples, metric against metric (perm-both, perm-items, perm-systems
and perm-outputs, MTME's early stopping included).

A resample swaps the two metrics' scores of some outputs (signs s = ±1 per output); each
of the two hybrids then needs, per pair of systems, the share of SPA's fixed source flips
σ under which the systems' difference stays at least the observed one. That takes the
null sums σ·M of the hybrid's (S, N) system × source matrix M: one matrix product per
hybrid and resample, the whole cost of the test.

The null sums are linear in the scores. With mid and half the pair's mean and
half-difference, the hybrids are mid ± s∘half, so σ·M± = σ·mid ± ½(σ·(s∘z_i) − σ·(s∘z_j)):
σ·(s∘z_m) belongs to one metric and one resample, not to a pair, so one product per metric
and block of resamples serves every pair of metrics and both hybrids (2·(M − 1) products
before). The observed differences are linear the same way (each hybrid's sums per system
are the mean's ± half the two metrics' signed sums), so no hybrid matrix is built. Both
differ from the hybrid's own sums by rounding only: where a flip's sum lands within a bound
of that rounding of the observed difference (ties: equal scores, a metric repeated), only
the hybrid's own product, summed as before, can say which side it falls on: such a
resample's hybrid is built and counted again that way, so the counts are those of the
hybrids' own products, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from meaningbench.analysis.metaeval import SystemCells
from meaningbench.analysis.parallel import n_workers, thread_map

SPA_CELLS = 8_000_000  # metrics × resamples × systems × flips held at once (64 MB)

Pair = tuple[int, int]
StopRule = Callable[[np.ndarray, Pair], bool]


class CellMeans:
    """`SystemCells.means` for many rows in one weighted count: the same sums, in the same
    order, as one count per row."""

    def __init__(self, cells: SystemCells) -> None:
        self.kept = cells.cells >= 0
        self.codes = cells.cells[self.kept]
        self.s, self.n = len(cells.systems), cells.n_sources
        size = self.s * self.n
        counts = np.bincount(self.codes, minlength=size)
        self.count = np.maximum(counts, 1).astype(np.float64)
        # One output per cell (the usual design): a cell's mean is its output's score, so
        # the matrix is a gather (a sum of one term, divided by one, is that term).
        one = (counts == 1).all()
        self.order = np.flatnonzero(self.kept)[np.argsort(self.codes)] if one else None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """(B, S, N) cell means of B rows of scores on the outputs."""
        size = self.s * self.n
        b = x.shape[0]
        if self.order is not None:
            return x[:, self.order].reshape(b, self.s, self.n) + 0.0  # −0.0 as the sum gives it
        codes = (np.arange(b)[:, None] * size + self.codes[None, :]).ravel()
        sums = np.bincount(codes, weights=x[:, self.kept].ravel(), minlength=b * size)
        return (sums.reshape(b, size) / self.count).reshape(b, self.s, self.n)


def spa_deltas(
    cells: SystemCells,
    human_p: np.ndarray,
    flips: np.ndarray,
    z: np.ndarray,
    output_signs: Callable[[int, int], np.ndarray],
    resamples: tuple[int, int],
    stop: StopRule | None = None,
) -> Iterator[tuple[Pair, np.ndarray]]:
    """(metric i, metric j) → SPA(hybrid A) − SPA(hybrid B) on every resample, for every
    pair i < j of the columns of `z` (standardised scores). `output_signs(r0, r1)` gives
    resamples r0..r1's signs per output (−1: the output's scores are swapped), `flips` are
    SPA's (Q, N) source flips and `human_p` the human p-values. `resamples` is (how many,
    block): `stop(delta, pair)`, asked after each whole block, ends a pair early."""
    means = CellMeans(cells)
    m = z.shape[1]
    total, block = resamples
    upper = human_p[np.triu_indices(means.s, 1)]
    pairs = [(i, j) for i in range(m) for j in range(i + 1, m)]
    base = _PairBases(means, z, pairs, flips)
    parts: dict[Pair, list[np.ndarray]] = {p: [] for p in pairs}
    done: dict[Pair, np.ndarray] = {}
    for r0 in range(0, total, block):
        if not pairs:
            break
        s = output_signs(r0, min(r0 + block, total))
        for p, delta in _block_deltas(means, flips, upper, z, s, pairs, base):
            parts[p].append(delta)
        for p in list(pairs):
            if stop is not None and s.shape[0] == block and stop(np.concatenate(parts[p]), p):
                done[p] = np.concatenate(parts[p])
                pairs.remove(p)
    done.update({p: np.concatenate(parts[p]) for p in pairs})
    for p in sorted(done):
        yield p, done[p]


def _slack(means: CellMeans, z: np.ndarray, pair: Pair) -> np.ndarray:
    """(S,) a bound on the rounding of any null sum of one system for this pair of metrics,
    whichever way it is summed (the pair's mean and halves, or a hybrid's own scores): a
    few units of the last place of Σ |scores| per term."""
    i, j = pair
    size = np.abs((z[:, i] + z[:, j]) / 2.0) + 0.5 * (np.abs(z[:, i]) + np.abs(z[:, j]))
    n = means.n
    return np.asarray(16.0 * (n + 4) * np.finfo(np.float64).eps * means(size[None, :])[0].sum(1))


def _null(matrices: np.ndarray, flips: np.ndarray) -> np.ndarray:
    """(B, S, Q) Σ_n flip · score of every system of B (S, N) matrices."""
    b, s, n = matrices.shape
    return np.asarray(matrices.reshape(-1, n) @ flips.T).reshape(b, s, -1)


class _PairBases:
    """Per pair of metrics, the null sums (S, Q) and sums per system (S,) of the pair's mean
    scores (both hybrids are these ± half the two metrics' signed sums) and the rounding
    bound of its null sums (S,), as arrays a pair's row indexes."""

    def __init__(self, means: CellMeans, z: np.ndarray, pairs: list[Pair], flips: np.ndarray):
        self.row = {p: t for t, p in enumerate(pairs)}
        mids = [means(((z[:, i] + z[:, j]) / 2.0)[None, :]) for i, j in pairs]
        self.null = np.stack([_null(m, flips)[0] for m in mids])
        self.totals = np.stack([m.sum(axis=2)[0] for m in mids])
        self.slack = np.stack([_slack(means, z, p) for p in pairs])


def _block_deltas(
    means: CellMeans,
    flips: np.ndarray,
    upper: np.ndarray,
    z: np.ndarray,
    s: np.ndarray,
    pairs: list[Pair],
    base: _PairBases,
) -> Iterator[tuple[Pair, np.ndarray]]:
    """The deltas of one block of resamples (signs `s`, (k, n)) for the pairs still on,
    in sub-blocks small enough to hold every metric's null sums at once."""
    metrics = sorted({c for p in pairs for c in p})
    step = max(1, SPA_CELLS // (len(metrics) * means.s * flips.shape[0]))
    out: dict[Pair, list[np.ndarray]] = {p: [] for p in pairs}
    # One buffer for every sub-block's null sums: a fresh array of this size is new memory
    # from the system each time, every page of it faulted in again.
    buffer = np.empty(len(metrics) * min(step, s.shape[0]) * means.s * flips.shape[0])
    for r0 in range(0, s.shape[0], step):
        sr = s[r0 : r0 + step]
        deltas = _sub_block(means, flips, upper, z, sr, metrics, pairs, base, buffer)
        for pair, delta in zip(pairs, deltas, strict=True):
            out[pair].append(delta)
    for p in pairs:
        yield p, np.concatenate(out[p])


def _sub_block(
    means: CellMeans,
    flips: np.ndarray,
    upper: np.ndarray,
    z: np.ndarray,
    sr: np.ndarray,
    metrics: list[int],
    pairs: list[Pair],
    base: _PairBases,
    buffer: np.ndarray,
) -> list[np.ndarray]:
    """Each pair's deltas on resamples `sr`: the products and the compiled counts release
    the GIL, so metrics, then shares of the pairs, run on the analysis threads."""
    from meaningbench.analysis.metaeval_measures import system_pair_hits
    from meaningbench.analysis.metaeval_swap_kernels import spa_pair_hits

    signed = _Signed(means, sr)
    k, q = sr.shape[0], flips.shape[0]
    shape = (len(metrics), k, means.s, q)
    nulls = buffer[: int(np.prod(shape))].reshape(shape)
    sums = np.empty((len(metrics), k, means.s))

    def metric_sums(t: int) -> None:
        matrices = signed.matrices(0.0, z[:, metrics[t]], 1)
        nulls[t] = _null(matrices, flips)
        sums[t] = matrices.sum(axis=2)

    thread_map(metric_sums, range(len(metrics)))
    at = {c: t for t, c in enumerate(metrics)}
    pi = np.array([at[i] for i, _ in pairs], np.int64)
    pj = np.array([at[j] for _, j in pairs], np.int64)
    pb = np.array([base.row[p] for p in pairs], np.int64)
    mid = base.totals[pb][:, None, :]
    half = 0.5 * (sums[pi] - sums[pj])
    totals = np.concatenate([mid + half, mid - half], axis=1)
    # A few shares per thread: the pool hands the next to whichever finishes first.
    shares = [c for c in np.array_split(np.arange(len(pairs)), 4 * n_workers()) if c.size]

    def spa_of(hits: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 - np.mean(np.abs(upper - hits / q), axis=-1))

    def count(c: np.ndarray) -> np.ndarray:
        hits, unsure = spa_pair_hits(base.null, nulls, totals[c], base.slack, (pi[c], pj[c], pb[c]))
        vals = spa_of(hits)  # here, on the pool: these passes over the counts are not small
        for t, row in np.argwhere(unsure):
            i, j = pairs[c[t]]  # near a tie: the hybrid's own product
            hybrid = signed.hybrid(z[:, i], z[:, j], int(row))
            vals[t, row] = spa_of(system_pair_hits(hybrid, flips))
        return vals

    vals = np.concatenate(thread_map(count, shares))
    return list(vals[:, :k] - vals[:, k:])


class _Signed:
    """The (S, N) matrices of scores mid ± s·half on a block of resamples' signs s. With one
    output per cell the signs are put in matrix order once, and each pair's mid and half
    once, not every resample's row of scores: the same elementwise numbers, in the same
    places."""

    def __init__(self, means: CellMeans, sr: np.ndarray) -> None:
        self.means, self.sr = means, sr
        self.cells = None if means.order is None else sr[:, means.order]

    def hybrid(self, zi: np.ndarray, zj: np.ndarray, row: int) -> np.ndarray:
        """(S, N) the matrix of one row of `matrices` of the pair (zi, zj): row < k is hybrid
        A of resample `row`, row ≥ k hybrid B of resample row − k."""
        k = self.sr.shape[0]
        one = _Signed(self.means, self.sr[row % k : row % k + 1])
        return np.asarray(one.matrices((zi + zj) / 2.0, (zi - zj) / 2.0, 2)[row // k])

    def matrices(self, mid: np.ndarray | float, half: np.ndarray, sides: int) -> np.ndarray:
        """(sides · k, S, N): mid + s·half on every resample, then (sides = 2) mid − s·half."""
        m = self.means
        if self.cells is None:
            rows = [mid + self.sr * half, mid - self.sr * half][:sides]
            return m(np.concatenate(rows))
        mc = mid if isinstance(mid, float) else mid[m.order]
        hc = half[m.order]
        rows = [mc + self.cells * hc, mc - self.cells * hc][:sides]
        return (np.concatenate(rows) + 0.0).reshape(-1, m.s, m.n)  # −0.0 as the sum gives it
