"""Correlation statistics of many metric columns against one human vector, on arrays.

Every function takes an (n, m) matrix of metric values (one column per metric run, NaN =
not scored), an (n,) human vector (NaN = not rated) and works on the items where both
exist, column by column. Pearson, Spearman, R² and RMSE are vectorised over the columns;
Kendall runs one column at a time on cached sort orders. scipy.stats is the oracle: the
same numbers give the same statistics and p-values (tests hold them to it).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from scipy import special

from meaningbench.analysis.kendall import KendallCache, kendall_columns
from meaningbench.analysis.ranks import (
    ColumnOrder,
    MaskedRanks,
)


def as_matrix(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    return x[:, None] if x.ndim == 1 else x


def valid_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n, m): items where the metric value and the human value both exist."""
    return np.asarray(np.isfinite(x) & np.isfinite(np.asarray(y, dtype=np.float64))[:, None])


def pearson_columns(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Pearson r of each column of x with y over its masked items (two-pass, stable)."""
    x = as_matrix(x)
    yy = np.broadcast_to(np.asarray(y, dtype=np.float64)[:, None], x.shape)
    n = mask.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        xs = np.where(mask, x, 0.0)
        ys = np.where(mask, yy, 0.0)
        mx = xs.sum(axis=0) / n
        my = ys.sum(axis=0) / n
        dx = np.where(mask, x - mx, 0.0)
        dy = np.where(mask, yy - my, 0.0)
        sxy = np.einsum("ij,ij->j", dx, dy)
        sxx = np.einsum("ij,ij->j", dx, dx)
        syy = np.einsum("ij,ij->j", dy, dy)
        r = sxy / np.sqrt(sxx * syy)
    r = np.where((sxx > 0) & (syy > 0) & (n >= 2), r, np.nan)
    return np.clip(r, -1.0, 1.0)


def corr_pvalue(r: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Two-sided p of H0: ρ = 0 by the t test on n − 2 df (scipy's pearsonr / spearmanr)."""
    r = np.asarray(r, dtype=np.float64)
    df = np.asarray(n, dtype=np.float64) - 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = r * np.sqrt(df / ((1.0 - r) * (1.0 + r)))
        p = 2.0 * special.stdtr(df, -np.abs(t))
    p = np.where(np.abs(r) >= 1.0, 0.0, p)
    return np.where((df > 0) & np.isfinite(r), p, np.nan)


def r2_rmse(x: np.ndarray, rating: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R² and RMSE of the metric value taken as a prediction of the rating, no fitting.

    R² = 1 − SS_res / SS_tot with the metric value itself as the prediction, so it is
    negative whenever the metric predicts worse than the ratings' mean (a metric on another
    scale, or one that is biased, is penalised — unlike the square of Pearson's r).
    """
    x = as_matrix(x)
    r = np.asarray(rating, dtype=np.float64)
    mf = mask.astype(np.float64)
    n = mf.sum(axis=0)
    r0 = np.where(np.isfinite(r), r, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = np.where(mask, r0[:, None] - x, 0.0)
        ss_res = np.einsum("ij,ij->j", res, res)
        # Σ(r − r̄)² per column from two matrix-vector products; ratings are bounded, so
        # the difference of sums loses nothing that matters in float64.
        sr = r0 @ mf
        ss_tot = (r0 * r0) @ mf - sr * sr / n
        r2 = np.where(ss_tot > 1e-12 * np.maximum(n, 1), 1.0 - ss_res / ss_tot, np.nan)
        rmse = np.sqrt(ss_res / n)
    return np.where(n >= 2, r2, np.nan), np.where(n >= 1, rmse, np.nan)


def spearman_columns(
    x: np.ndarray,
    y: np.ndarray,
    mask: np.ndarray,
    *,
    order: ColumnOrder | None = None,
    ranks: MaskedRanks | None = None,
) -> np.ndarray:
    """Spearman ρ (Pearson of mid-ranks within each column's masked items)."""
    x = as_matrix(x)
    rx = ranks.ranks(mask) if ranks is not None else (order or ColumnOrder.of(x)).midranks(mask)
    y = np.asarray(y, dtype=np.float64)
    if (mask == mask[:, :1]).all():
        ry = np.broadcast_to(ColumnOrder.of(y).midranks(mask[:, 0]), mask.shape)
    else:
        ry = _column_ranks_of_vector(y, mask)
    return _pearson_rank_columns(rx, ry, mask)


def _column_ranks_of_vector(y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mid-ranks of one vector within each column's mask, (n, m).

    Ranked once over the union of the masks; a column that lacks some of those items takes
    off, for each item, the dropped items below its tie group and half of those in it.
    """
    n, m = mask.shape
    union: np.ndarray = np.asarray(mask.any(axis=1))
    order = ColumnOrder.of(y)
    base = order.midranks(union)[:, 0]
    out = np.where(mask, base[:, None], np.nan)
    dropped = union[:, None] & ~mask
    cols = np.flatnonzero(dropped.any(axis=0))
    if cols.size == 0:
        return out
    group = np.empty(n, dtype=np.intp)
    group[order.order[:, 0]] = order.group[:, 0]
    rows_d, cols_d = np.nonzero(dropped[:, cols])
    counts = np.zeros((order.n_groups, cols.size))
    np.add.at(counts, (group[rows_d], cols_d), 1.0)
    below = np.cumsum(counts, axis=0) - counts
    shift = below[group] + 0.5 * counts[group]
    out[:, cols] = np.where(mask[:, cols], base[:, None] - shift, np.nan)
    return out


def _pearson_dense(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson of each column of a complete (n, m) matrix with a complete y."""
    n = x.shape[0]
    if n < 2:
        return np.full(x.shape[1], np.nan)
    dx = x - x.mean(axis=0)
    dy = y - y.mean()
    sxx = np.einsum("ij,ij->j", dx, dx)
    syy = float(dy @ dy)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dy @ dx) / np.sqrt(sxx * syy)
    return np.clip(np.where((sxx > 0) & (syy > 0), r, np.nan), -1.0, 1.0)


def _pearson_masked(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Pearson of column j of x with column j of y over mask[:, j] (two-pass)."""
    n = mask.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(mask, x, 0.0).sum(axis=0) / n
        my = np.where(mask, y, 0.0).sum(axis=0) / n
        dx = np.where(mask, x - mx, 0.0)
        dy = np.where(mask, y - my, 0.0)
        sxx = np.einsum("ij,ij->j", dx, dx)
        syy = np.einsum("ij,ij->j", dy, dy)
        r = np.einsum("ij,ij->j", dx, dy) / np.sqrt(sxx * syy)
    return np.clip(np.where((sxx > 0) & (syy > 0) & (n >= 2), r, np.nan), -1.0, 1.0)


def _pearson_rank_columns(rx: np.ndarray, ry: np.ndarray, mask: np.ndarray) -> np.ndarray:
    n = mask.sum(axis=0)
    mean = (n + 1.0) / 2.0  # mid-ranks of k items always average (k + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = np.where(mask, rx - mean, 0.0)
        dy = np.where(mask, ry - mean, 0.0)
        sxx = np.einsum("ij,ij->j", dx, dx)
        syy = np.einsum("ij,ij->j", dy, dy)
        r = np.einsum("ij,ij->j", dx, dy) / np.sqrt(sxx * syy)
    r = np.where((sxx > 0) & (syy > 0) & (n >= 2), r, np.nan)
    return np.clip(r, -1.0, 1.0)


def system_pearson(
    x: np.ndarray, y: np.ndarray, mask: np.ndarray, systems: np.ndarray
) -> np.ndarray:
    """Pearson r over systems of the per-system means (needs 3 systems or more).

    `systems` holds an integer code per item (negative = no system). Means are taken over
    the items where both the metric and the human value exist, column by column.
    """
    x = as_matrix(x)
    y = np.asarray(y, dtype=np.float64)
    systems = np.asarray(systems)
    n_sys = int(systems.max()) + 1 if systems.size and systems.max() >= 0 else 0
    out = np.full(x.shape[1], np.nan)
    if n_sys < 3:
        return out
    has = systems >= 0
    if (mask == mask[:, :1]).all():
        # One item set for every column: per-system sums of all columns in one pass.
        keep = mask[:, 0] & has
        code = systems[keep]
        perm = np.argsort(code, kind="stable")
        code = code[perm]
        starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]]) if code.size else code
        if starts.size < 3:
            return out
        count = np.diff(np.r_[starts, code.size])[:, None]
        mx = np.add.reduceat(x[keep][perm], starts, axis=0) / count
        my = np.add.reduceat(y[keep][perm], starts) / count[:, 0]
        return _pearson_dense(mx, my)
    # Per-column item sets: sums of every column per system in one sorted pass.
    keep = mask.any(axis=1) & has
    code = systems[keep]
    perm = np.argsort(code, kind="stable")
    code = code[perm]
    if code.size == 0:
        return out
    starts = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
    mk = mask[keep][perm]
    count = np.add.reduceat(mk.astype(np.float64), starts, axis=0)
    sx = np.add.reduceat(np.where(mk, x[keep][perm], 0.0), starts, axis=0)
    sy = np.add.reduceat(np.where(mk, y[keep][perm][:, None], 0.0), starts, axis=0)
    present = count > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = sx / count, sy / count
    enough = present.sum(axis=0) >= 3
    r = _pearson_masked(mx, my, present)
    out[enough] = r[enough]
    return out


def williams_test(
    r12: np.ndarray | float,
    r13: np.ndarray | float,
    r23: np.ndarray | float,
    n: np.ndarray | float,
    *,
    alternative: str = "greater",
) -> tuple[np.ndarray, np.ndarray]:
    """Williams' test of r12 vs r13, two correlations that share variable 1 (the humans).

    r12 and r13 are metric A's and metric B's correlations with the human scores, r23 the
    correlation between the two metrics, n the number of items. Formula as in Graham &
    Baldwin (2014) and the WMT metrics tasks; t has n − 3 degrees of freedom.
    `alternative="greater"` tests r12 > r13 (WMT's one-sided test), "two-sided" either way.
    """
    r12, r13, r23, n = (np.asarray(v, dtype=np.float64) for v in (r12, r13, r23, n))
    k = 1.0 - r12**2 - r13**2 - r23**2 + 2.0 * r12 * r13 * r23
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = 2.0 * k * (n - 1.0) / (n - 3.0) + ((r12 + r13) ** 2 / 4.0) * (1.0 - r23) ** 3
        t = (r12 - r13) * np.sqrt((n - 1.0) * (1.0 + r23) / denom)
    df = n - 3.0
    if alternative == "greater":
        p = special.stdtr(df, -t)
    elif alternative == "less":
        p = special.stdtr(df, t)
    elif alternative == "two-sided":
        p = 2.0 * special.stdtr(df, -np.abs(t))
    else:
        raise ValueError(f"unknown alternative {alternative!r}")
    p = np.where(df > 0, p, np.nan)
    return t, p


@dataclass
class PointStats:
    """Point statistics per metric column (arrays of length m): the dashboard's cheap path."""

    n: np.ndarray
    pearson: np.ndarray
    pearson_p: np.ndarray
    spearman: np.ndarray
    spearman_p: np.ndarray
    kendall: np.ndarray
    kendall_p: np.ndarray
    r2: np.ndarray
    rmse: np.ndarray
    system_pearson: np.ndarray

    def column(self, j: int) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)[j]) for f in fields(self)}


def point_statistics(
    x: np.ndarray,
    y: np.ndarray,
    *,
    rating: np.ndarray | None = None,
    systems: np.ndarray | None = None,
    order: ColumnOrder | None = None,
    ranks: MaskedRanks | None = None,
    kendall: bool = True,
    kendall_cache: KendallCache | None = None,
) -> PointStats:
    """Every statistic without bootstrap, for all columns of x against y.

    `rating` is the human score on the metric's 0–100 scale for R² and RMSE (defaults to y;
    pass the raw means when y holds z-scores). `order` is a cached `ColumnOrder.of(x)`;
    `ranks` a `MaskedRanks` and `kendall_cache` a `KendallCache` kept across calls (the
    live path). Items whose `rating` is missing still count for the correlations.
    """
    x = as_matrix(x)
    y = np.asarray(y, dtype=np.float64)
    if x.shape[1] == 0 or x.shape[0] == 0:
        m = x.shape[1]
        nan = np.full(m, np.nan)
        return PointStats(np.zeros(m, dtype=np.int64), *([nan] * 9))
    mask = valid_mask(x, y)
    if ranks is None:
        ranks = MaskedRanks(x, order or ColumnOrder.of(x))
    n = mask.sum(axis=0)
    m = x.shape[1]
    rows = mask[:, 0] if m else np.zeros(x.shape[0], dtype=bool)
    shared = m > 0 and bool((mask == rows[:, None]).all())
    if shared:
        pearson = _pearson_dense(x[rows], y[rows]) if rows.sum() >= 2 else np.full(m, np.nan)
    else:
        pearson = pearson_columns(x, y, mask)
    spearman = spearman_columns(x, y, mask, ranks=ranks)
    if kendall:
        tau, tau_p = kendall_columns(x, y, mask, ranks=ranks, cache=kendall_cache)
    else:
        tau = tau_p = np.full(m, np.nan)
    rating = y if rating is None else np.asarray(rating, dtype=np.float64)
    r2, rmse = r2_rmse(x, rating, mask & np.isfinite(rating)[:, None])
    sys_r = system_pearson(x, y, mask, systems) if systems is not None else np.full(m, np.nan)
    return PointStats(
        n=n,
        pearson=pearson,
        pearson_p=corr_pvalue(pearson, n),
        spearman=spearman,
        spearman_p=corr_pvalue(spearman, n),
        kendall=tau,
        kendall_p=tau_p,
        r2=r2,
        rmse=rmse,
        system_pearson=sys_r,
    )
