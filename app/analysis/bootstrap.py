"""Bootstrap intervals for Pearson and Spearman of many metric columns at once.

A resample of n units drawn with replacement is a vector of counts w (how often each unit
was drawn). Pearson's r of the resample depends on the data only through weighted sums —
Σw, Σwx, Σwx², Σwy, Σwy², Σwxy — so all resamples of a chunk and all metric columns come
out of one matrix product W·F (counts × per-unit sums): no per-resample indexing, no
per-metric loop. Data are standardised first so these float32 sums do not cancel.

Spearman's ρ of a resample is Pearson's r of the ranks *within the resample*. Re-ranking
costs a pass per resample and column, which is what is done for small studies
("rerank", exact). For large ones ("fixed", the default above `RERANK_MAX_UNITS`), the
ranks of the full sample are resampled with the same matrix product: this ignores the
rank re-estimation, which narrows the interval a little when ρ is high and n small, and
is indistinguishable from the exact interval at a few thousand items (tests compare both).

Metrics that failed on a few items do not multiply the work: every column shares the
terms of the human scores, and the few missing cells are subtracted through a sparse
correction. (In the fixed method the human ranks are therefore taken over the items any
metric scored, not re-ranked per metric.)

Resampling units are items, or source groups (every item of a drawn source comes along:
outputs of one source are not independent). Up to `MULTINOMIAL_MAX_UNITS` units the
counts are the classical multinomial draw; above, each unit's count is an independent
Poisson(1) variable (the Poisson bootstrap, Hanley & MacGibbon 2006): at that size the
two are indistinguishable, and Poisson counts come from a 16-bit table lookup, several
times cheaper than drawing and counting n indices. Intervals are percentile intervals.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from meaningbench.analysis.parallel import thread_map
from meaningbench.analysis.ranks import ColumnOrder, MaskedRanks
from meaningbench.analysis.stats import as_matrix, valid_mask

RERANK_MAX_UNITS = 1000
# Below this many counts (units × resamples) the sums run in float64: exact and still cheap.
FLOAT64_MAX_CELLS = 20_000_000
# Counts of one chunk: at most this many cells (~40 MB of temporaries per worker thread).
CHUNK_CELLS = 1 << 21
MULTINOMIAL_MAX_UNITS = 20_000


def _poisson_table() -> np.ndarray:
    """Poisson(1) counts indexed by a uniform 16-bit integer (inverse CDF, 2^-16 resolution)."""
    k = np.arange(16)
    pmf = np.exp(-1.0) / np.cumprod(np.r_[1.0, k[1:].astype(float)])
    edges = np.round(np.cumsum(pmf) * 65536.0)
    return np.searchsorted(edges, np.arange(65536), side="right").astype(np.uint8)


_POISSON = _poisson_table()


def chunk_sizes(n_units: int, n_boot: int, *, chunk_cells: int = CHUNK_CELLS) -> list[int]:
    per_chunk = max(1, min(n_boot, chunk_cells // max(1, n_units)))
    full, rest = divmod(n_boot, per_chunk)
    return [per_chunk] * full + ([rest] if rest else [])


def chunk_counts(
    n_units: int, n_rows: int, seed: np.random.SeedSequence, dtype: type = np.float64
) -> np.ndarray:
    """(n_rows, n_units) counts: row b says how often each unit was drawn in resample b."""
    rng = np.random.default_rng(seed)
    if n_units > MULTINOMIAL_MAX_UNITS:
        u = rng.integers(0, 65536, size=(n_rows, n_units), dtype=np.uint16)
        return _POISSON[u].astype(dtype)
    # int32 draws are cheaper; the offsets stay below 2**31 for any chunk of CHUNK_CELLS.
    itype = np.int32 if n_rows * n_units < 2**31 else np.int64
    draws = rng.integers(0, n_units, size=(n_rows, n_units), dtype=itype)
    offsets: np.ndarray = np.arange(n_rows, dtype=itype) * n_units
    draws += offsets[:, None].astype(itype)
    counts = np.bincount(draws.ravel(), minlength=n_rows * n_units)
    return counts.reshape(n_rows, n_units).astype(dtype)


def resample_counts(
    n_units: int, n_boot: int, seed: int, dtype: type = np.float64
) -> Iterator[np.ndarray]:
    """The counts `bootstrap` draws for this seed, chunk after chunk (for checks and reuse).

    Each chunk has its own child seed, so the draws do not depend on which thread runs it.
    """
    sizes = chunk_sizes(n_units, n_boot)
    for size, child in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes)), strict=True):
        yield chunk_counts(n_units, size, child, dtype)


def _standardise_rows(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each row centred and scaled over its masked entries; zero outside the mask."""
    n = mask.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        vz = np.where(mask, v, 0.0)
        mean = vz.sum(axis=1, keepdims=True) / n
        vz -= mean
        vz[~mask] = 0.0
        sd = np.sqrt(np.einsum("ij,ij->i", vz, vz)[:, None] / n)
    vz /= np.where(sd > 0, sd, 1.0)
    return vz


def _standardise(v: np.ndarray) -> np.ndarray:
    sd = v.std()
    return np.asarray((v - v.mean()) / (sd if sd > 0 else 1.0))


def _column_block(xt: np.ndarray, mask_t: np.ndarray, ys: np.ndarray, dtype: type) -> np.ndarray:
    """(3m, n) rows [x_j..., x_j²..., x_j·y...], x standardised per column, 0 where missing."""
    m, n = xt.shape
    xs = _standardise_rows(xt, mask_t)
    out = np.empty((3 * m, n), dtype=dtype)
    out[:m] = xs
    np.multiply(xs, xs, out=out[m : 2 * m], casting="unsafe")
    np.multiply(xs, ys[None, :], out=out[2 * m :], casting="unsafe")
    return out


def _corrections(
    mask: np.ndarray, common: np.ndarray, codes: np.ndarray | None
) -> tuple[np.ndarray, Any] | None:
    """The units holding a missing cell, and a sparse (k·m, those units) matrix of the common
    terms on each column's missing cells: what `W[:, units] @ matrix.T` subtracts."""
    from scipy import sparse

    rows, cols = np.nonzero(~mask)
    if rows.size == 0:
        return None
    k = common.shape[0]
    m = mask.shape[1]
    units, local = np.unique(rows if codes is None else codes[rows], return_inverse=True)
    data = np.concatenate([common[t, rows] for t in range(k)])
    r = np.concatenate([cols + t * m for t in range(k)])
    c = np.tile(local, k)
    return units, sparse.csr_matrix((data, (r, c)), shape=(k * m, units.size))


def _pearson_from_sums(
    common: np.ndarray, block: np.ndarray, corr: np.ndarray | None, m: int, k0: int
) -> np.ndarray:
    """Per-resample Pearson of each column from weighted sums.

    `common` holds Σw, Σw·y, Σw·y² at columns k0, k0+1, k0+2 (Σw at 0); `block` the
    per-column Σw·x, Σw·x², Σw·x·y; `corr` the same common terms over each column's
    missing cells, subtracted so every column sums over its own items only.
    """
    common = common.astype(np.float64)
    sw = common[:, 0:1]
    sy = common[:, k0 : k0 + 1]
    syy = common[:, k0 + 1 : k0 + 2]
    if corr is not None:
        sw = sw - corr[:, 0:m]
        sy = sy - corr[:, k0 * m : (k0 + 1) * m]
        syy = syy - corr[:, (k0 + 1) * m : (k0 + 2) * m]
    block = block.astype(np.float64)
    sx, sxx, sxy = block[:, :m], block[:, m : 2 * m], block[:, 2 * m :]
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / sw
        vx = sxx - sx * sx / sw
        vy = syy - sy * sy / sw
        r = cov / np.sqrt(vx * vy)
    ok = (vx > 1e-9 * sw) & (vy > 1e-9 * sw)
    return np.where(ok, np.clip(r, -1.0, 1.0), np.nan)


def _full_mask(mask: np.ndarray, rows: np.ndarray) -> np.ndarray:
    full = np.zeros((rows.size, mask.shape[1]), dtype=bool)
    full[rows] = mask
    return full


def _unit_sums(features: np.ndarray, codes: np.ndarray | None, n_units: int) -> np.ndarray:
    """(k, n_units): the features summed over the items of each unit (source group)."""
    if codes is None:
        return features
    perm = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[perm], np.arange(n_units))
    return np.add.reduceat(features[:, perm], starts, axis=1)


@dataclass
class _RankPlan:
    """One column's items in x order and in y order, with their tie-group structure."""

    items: np.ndarray
    x_perm: np.ndarray
    x_starts: np.ndarray
    x_group: np.ndarray
    y_perm: np.ndarray
    y_starts: np.ndarray
    y_group: np.ndarray

    @staticmethod
    def _order(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        perm = np.argsort(values, kind="stable")
        v = values[perm]
        new = np.r_[True, v[1:] != v[:-1]]
        return perm, np.flatnonzero(new), np.cumsum(new) - 1

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray, items: np.ndarray) -> _RankPlan:
        xp, xs, xg = cls._order(x[items])
        yp, ys, yg = cls._order(y[items])
        return cls(items, xp, xs, xg, yp, ys, yg)


def _resample_midranks(
    w: np.ndarray, perm: np.ndarray, starts: np.ndarray, group: np.ndarray
) -> np.ndarray:
    # A tie group holding total weight g after `before` drawn items occupies ranks
    # before+1 .. before+g: its mid-rank is before + (g + 1) / 2.
    gw = np.add.reduceat(w[:, perm], starts, axis=1)
    before = np.cumsum(gw, axis=1) - gw
    ranks = np.empty_like(w)
    ranks[:, perm] = (before + (gw + 1.0) / 2.0)[:, group]
    return ranks


def _rerank_spearman(w: np.ndarray, plan: _RankPlan) -> np.ndarray:
    wj = w[:, plan.items].astype(np.float64)
    rx = _resample_midranks(wj, plan.x_perm, plan.x_starts, plan.x_group)
    ry = _resample_midranks(wj, plan.y_perm, plan.y_starts, plan.y_group)
    total = wj.sum(axis=1, keepdims=True)
    centre = (total + 1.0) / 2.0
    dx, dy = rx - centre, ry - centre
    with np.errstate(invalid="ignore", divide="ignore"):
        vx = (wj * dx * dx).sum(axis=1)
        vy = (wj * dy * dy).sum(axis=1)
        r = (wj * dx * dy).sum(axis=1) / np.sqrt(vx * vy)
    return np.where((vx > 0) & (vy > 0), np.clip(r, -1.0, 1.0), np.nan)


@dataclass
class BootstrapSamples:
    """Resampled Pearson and Spearman per column: (n_boot, m) arrays, same draws for all."""

    pearson: np.ndarray
    spearman: np.ndarray
    spearman_method: str  # "rerank" | "fixed" | "none"
    unit: str  # "items" | "groups"
    n_units: int

    def interval(self, statistic: str, confidence: float = 0.95) -> np.ndarray:
        """(m, 2) percentile interval; NaN where too few resamples had a defined value."""
        samples = getattr(self, statistic)
        alpha = (1.0 - confidence) / 2.0
        out = np.full((samples.shape[1], 2), np.nan)
        finite = np.isfinite(samples)
        for j in range(samples.shape[1]):
            if finite[:, j].sum() >= max(10, samples.shape[0] // 2):
                out[j] = np.quantile(samples[finite[:, j], j], [alpha, 1.0 - alpha])
        return out


def _resampled_units(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, int]:
    """(x, y, mask, rows, codes, n_units) on the rows with any valid pair: `codes` maps each
    row to its group when groups are resampled, and `n_units` counts what is resampled."""
    x = as_matrix(x)
    y = np.asarray(y, dtype=np.float64)
    mask = valid_mask(x, y)
    rows: np.ndarray = np.asarray(mask.any(axis=1))
    x, y, mask = x[rows], y[rows], mask[rows]
    codes = None
    if groups is not None:
        _, codes = np.unique(np.asarray(groups)[rows], return_inverse=True)
        n_units = int(codes.max()) + 1 if codes.size else 0
    else:
        n_units = int(rows.sum())
    return x, y, mask, rows, codes, n_units


def _sum_terms(
    x: np.ndarray,
    y: np.ndarray,
    mask: np.ndarray,
    rows: np.ndarray,
    method: str,
    ranks: MaskedRanks | None,
    dtype: type,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """(common, blocks): the rows every column shares, and each correlation's column block."""
    mask_t = np.ascontiguousarray(mask.T)
    # Common terms (rows): 1, y, y² and, for the fixed Spearman, the human ranks and squares.
    ys = _standardise(y)
    common_rows = [np.ones_like(ys), ys, ys * ys]
    blocks = [_column_block(np.ascontiguousarray(x.T), mask_t, ys, dtype)]
    if method == "fixed":
        # Full-sample ranks of each column among its items; human ranks over all rows.
        if ranks is not None:  # the caller's ranks, cached under the same mask
            rx = ranks.ranks(_full_mask(mask, rows))[rows]
        else:
            rx = MaskedRanks(x).ranks(mask)
        yr = _standardise(ColumnOrder.of(y).midranks(np.ones(y.size, dtype=bool))[:, 0])
        common_rows += [yr, yr * yr]
        blocks.append(_column_block(np.ascontiguousarray(rx.T), mask_t, yr, dtype))
    return np.vstack(common_rows), blocks


def bootstrap(
    x: np.ndarray,
    y: np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    groups: np.ndarray | None = None,
    spearman: str = "auto",
    ranks: MaskedRanks | None = None,
) -> BootstrapSamples:
    """Resample units and recompute Pearson and Spearman of every column of x against y.

    `groups` (one label per item) switches to resampling source groups. `spearman` is
    "rerank" (exact), "fixed" (full-sample ranks) or "auto" (rerank up to
    RERANK_MAX_UNITS units), or "none". `ranks` is the caller's `MaskedRanks` of the full
    matrix (its mid-ranks are what the fixed method resamples; saves a sort).
    """
    x, y, mask, rows, codes, n_units = _resampled_units(x, y, groups)
    m = x.shape[1]
    unit = "items" if groups is None else "groups"
    empty = np.full((max(n_boot, 0), m), np.nan)
    if n_units < 3 or n_boot < 1 or m == 0:
        return BootstrapSamples(empty, empty.copy(), "none", unit, n_units)

    method = spearman
    if method == "auto":
        method = "rerank" if n_units <= RERANK_MAX_UNITS else "fixed"
    dtype = np.float64 if n_units * n_boot <= FLOAT64_MAX_CELLS else np.float32
    common, blocks = _sum_terms(x, y, mask, rows, method, ranks, dtype)
    n_common = common.shape[0]
    features = _unit_sums(np.concatenate([common.astype(dtype), *blocks]), codes, n_units)
    features_t = features.T  # (n_units, k) view for the product
    corrections = _corrections(mask, common, codes)
    plans = (
        [_RankPlan.of(x[:, j], y, np.flatnonzero(mask[:, j])) for j in range(m)]
        if method == "rerank"
        else []
    )

    sizes = chunk_sizes(n_units, n_boot)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    children = np.random.SeedSequence(seed).spawn(len(sizes))
    pearson = np.empty((n_boot, m))
    spear = np.full((n_boot, m), np.nan)
    p_block = slice(n_common, n_common + 3 * m)
    s_block = slice(n_common + 3 * m, n_common + 6 * m)

    def run_chunk(k: int) -> None:
        w = chunk_counts(n_units, sizes[k], children[k], dtype)
        rows_k = slice(starts[k], starts[k] + sizes[k])
        sums = w @ features_t
        corr = None
        if corrections is not None:
            units, matrix = corrections
            corr = (matrix @ np.ascontiguousarray(w[:, units].T, dtype=np.float64)).T
        pearson[rows_k] = _pearson_from_sums(sums[:, :n_common], sums[:, p_block], corr, m, 1)
        if method == "fixed":
            spear[rows_k] = _pearson_from_sums(sums[:, :n_common], sums[:, s_block], corr, m, 3)
        elif method == "rerank":
            wi = w if codes is None else w[:, codes]
            for j, plan in enumerate(plans):
                spear[rows_k, j] = _rerank_spearman(wi, plan)

    thread_map(run_chunk, list(range(len(sizes))))
    return BootstrapSamples(pearson, spear, method, unit, n_units)
