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
from scipy import special, stats

from app.analysis.parallel import thread_map
from app.analysis.ranks import ColumnOrder, dense_ranks

try:  # scipy's own discordant-pair counter (a Fenwick tree), the core of kendalltau
    from scipy.stats._stats import _kendall_dis
except ImportError:  # pragma: no cover - a scipy that moved it; fall back to kendalltau
    _kendall_dis = None


def as_matrix(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    return x[:, None] if x.ndim == 1 else x


def valid_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n, m): items where the metric value and the human value both exist."""
    return np.isfinite(x) & np.isfinite(np.asarray(y, dtype=np.float64))[:, None]


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
    rr = np.broadcast_to(np.asarray(rating, dtype=np.float64)[:, None], x.shape)
    n = mask.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = np.where(mask, rr - x, 0.0)
        ss_res = np.einsum("ij,ij->j", res, res)
        mr = np.where(mask, rr, 0.0).sum(axis=0) / n
        dev = np.where(mask, rr - mr, 0.0)
        ss_tot = np.einsum("ij,ij->j", dev, dev)
        r2 = np.where(ss_tot > 0, 1.0 - ss_res / ss_tot, np.nan)
        rmse = np.sqrt(ss_res / n)
    return np.where(n >= 2, r2, np.nan), np.where(n >= 1, rmse, np.nan)


def spearman_columns(
    x: np.ndarray,
    y: np.ndarray,
    mask: np.ndarray,
    *,
    order: ColumnOrder | None = None,
    y_order: ColumnOrder | None = None,
) -> np.ndarray:
    """Spearman ρ (Pearson of mid-ranks within each column's masked items)."""
    x = as_matrix(x)
    order = order or ColumnOrder.of(x)
    y_order = y_order or ColumnOrder.of(np.asarray(y, dtype=np.float64))
    rx = order.midranks(mask)
    if (mask == mask[:, :1]).all():
        ry = np.broadcast_to(y_order.midranks(mask[:, 0]), mask.shape)
    else:
        ry = _column_ranks_of_vector(y_order, mask)
    return _pearson_rank_columns(rx, ry, mask)


def _column_ranks_of_vector(y_order: ColumnOrder, mask: np.ndarray) -> np.ndarray:
    n, m = mask.shape
    tiled = ColumnOrder(
        order=np.repeat(y_order.order, m, axis=1),
        group=y_order.group + (np.arange(m) * y_order.n_groups)[None, :],
        n_groups=y_order.n_groups * m,
    )
    return tiled.midranks(mask)


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


def _tie_sums(counts: np.ndarray) -> tuple[int, float, float]:
    c = counts[counts > 1].astype(np.float64)
    return (
        int((c * (c - 1) // 2).sum()),
        float((c * (c - 1.0) * (c - 2.0)).sum()),
        float((c * (c - 1.0) * (2.0 * c + 5.0)).sum()),
    )


def _kendall_column(
    values: np.ndarray,
    order: np.ndarray,
    group: np.ndarray,
    mask: np.ndarray,
    y: np.ndarray,
    y_dense: np.ndarray,
) -> tuple[float, float]:
    """Kendall τ-b and its p for one column, as scipy.stats.kendalltau computes them."""
    keep = mask[order]
    sel = order[keep]
    size = int(sel.size)
    if size < 2:
        return np.nan, np.nan
    if _kendall_dis is None:  # pragma: no cover
        res = stats.kendalltau(values[sel], y[sel])
        return float(res.statistic), float(res.pvalue)
    xg = group[keep]
    yd = np.ascontiguousarray(y_dense[sel], dtype=np.intp)
    xd = np.ascontiguousarray(xg - xg[0] + 1, dtype=np.intp)
    dis = int(_kendall_dis(xd, yd))
    x_ties = np.bincount(xd)
    y_ties = np.bincount(yd)
    xtie, x0, x1 = _tie_sums(x_ties)
    ytie, y0, y1 = _tie_sums(y_ties)
    ntie = 0
    if xtie:
        # Joint ties need (x, y) sorted; x is already, so only ties of x get re-sorted.
        key = xd.astype(np.int64) * (int(yd.max()) + 1) + yd
        key.sort(kind="stable")
        _, joint = np.unique(key, return_counts=True)
        ntie = _tie_sums(joint)[0]
    tot = size * (size - 1) // 2
    if xtie == tot or ytie == tot:
        return np.nan, np.nan
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = float(np.clip(con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie), -1.0, 1.0))
    if xtie == 0 and ytie == 0 and (size <= 33 or min(dis, tot - dis) <= 1):
        # scipy's exact null distribution for small samples without ties.
        return tau, float(stats.kendalltau(values[sel], y[sel]).pvalue)
    m = size * (size - 1.0)
    var = (m * (2 * size + 5) - x1 - y1) / 18 + (2.0 * xtie * ytie) / m
    if size > 2:
        var += x0 * y0 / (9 * m * (size - 2))
    z = con_minus_dis / np.sqrt(var)
    return tau, float(2.0 * special.ndtr(-abs(z)))


def kendall_columns(
    x: np.ndarray, y: np.ndarray, mask: np.ndarray, *, order: ColumnOrder | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Kendall τ-b with scipy's p-value (exact for small untied samples, else asymptotic)."""
    x = as_matrix(x)
    y = np.asarray(y, dtype=np.float64)
    order = order or ColumnOrder.of(x)
    y_dense = dense_ranks(y)
    m = x.shape[1]
    results = thread_map(
        lambda j: _kendall_column(
            x[:, j], order.order[:, j], order.group[:, j], mask[:, j], y, y_dense
        ),
        list(range(m)),
    )
    tau = np.array([r[0] for r in results], dtype=np.float64)
    p = np.array([r[1] for r in results], dtype=np.float64)
    return tau, p


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
    for j in range(x.shape[1]):
        keep = mask[:, j] & has
        code = systems[keep]
        count = np.bincount(code, minlength=n_sys)
        present = count > 0
        if present.sum() < 3:
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            mx = np.bincount(code, weights=x[keep, j], minlength=n_sys)[present] / count[present]
            my = np.bincount(code, weights=y[keep], minlength=n_sys)[present] / count[present]
        out[j] = pearson_columns(mx, my, np.ones((mx.size, 1), dtype=bool))[0]
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
    kendall: bool = True,
) -> PointStats:
    """Every statistic without bootstrap, for all columns of x against y.

    `rating` is the human score on the metric's 0–100 scale for R² and RMSE (defaults to y;
    pass the raw means when y holds z-scores). `order` is a cached `ColumnOrder.of(x)`.
    Items whose `rating` is missing still count for the correlations.
    """
    x = as_matrix(x)
    y = np.asarray(y, dtype=np.float64)
    mask = valid_mask(x, y)
    order = order or ColumnOrder.of(x)
    n = mask.sum(axis=0)
    pearson = pearson_columns(x, y, mask)
    spearman = spearman_columns(x, y, mask, order=order)
    if kendall:
        tau, tau_p = kendall_columns(x, y, mask, order=order)
    else:
        tau = tau_p = np.full(x.shape[1], np.nan)
    rating = y if rating is None else np.asarray(rating, dtype=np.float64)
    r2, rmse = r2_rmse(x, rating, mask & np.isfinite(rating)[:, None])
    sys_r = (
        system_pearson(x, y, mask, systems) if systems is not None else np.full(x.shape[1], np.nan)
    )
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
