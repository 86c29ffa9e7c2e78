"""Kendall's τ-b of many metric columns against one human vector, as scipy computes it.

Per column, on the items where both values exist: S = concordant − discordant pairs
(scipy's own Fenwick-tree counter of discordant pairs over the column's cached x order),
tie corrections from tie-group sizes, and scipy's p-value — the exact null distribution
for untied samples of at most 33 items, the asymptotic normal one otherwise.

`KendallCache` keeps S per column between dashboard refreshes. When exactly one item's
human score changed (one new or revised rating, raw means), S changes only through the
pairs that item is part of: ΔS = Σ_l sign(x_k − x_l)·(sign(y_new − y_l) − sign(y_old − y_l)),
an O(n·m) vector operation instead of m sorts and counts. Anything else recomputes.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from meaningbench.analysis.parallel import thread_map
from meaningbench.analysis.ranks import (
    ColumnOrder,
    MaskedRanks,
    XPlan,
    dense_ranks,
    tie_sums,
    x_plan,
)

try:  # scipy's own discordant-pair counter (a Fenwick tree), the core of kendalltau
    from scipy.stats._stats import _kendall_dis
except ImportError:  # pragma: no cover - a scipy that moved it; fall back to kendalltau
    _kendall_dis = None


def _joint_ties(xd: np.ndarray, yd: np.ndarray) -> int:
    """Pairs tied in both x and y (x groups are contiguous and sorted)."""
    key = xd.astype(np.int64) * (int(yd.max()) + 1) + yd
    if int(key.max()) < 8 * key.size:  # small key range: count, don't sort
        joint = np.bincount(key)
    else:
        key.sort()
        _, joint = np.unique(key, return_counts=True)
    return tie_sums(joint)[0]


def _finish(
    s: int,
    plan: XPlan,
    y_terms: tuple[int, float, float],
    values: np.ndarray,
    y: np.ndarray,
) -> tuple[float, float]:
    """τ-b and scipy's p from S and the tie terms."""
    size = int(plan.sel.size)
    xtie, x0, x1 = plan.xtie, plan.x0, plan.x1
    ytie, y0, y1 = y_terms
    tot = size * (size - 1) // 2
    if size < 2 or xtie == tot or ytie == tot:
        return np.nan, np.nan
    tau = float(np.clip(s / np.sqrt(tot - xtie) / np.sqrt(tot - ytie), -1.0, 1.0))
    if xtie == 0 and ytie == 0:
        dis = (tot - s) // 2
        if size <= 33 or min(dis, tot - dis) <= 1:
            # scipy's exact null distribution for small samples without ties.
            return tau, float(stats.kendalltau(values[plan.sel], y[plan.sel]).pvalue)
    m = size * (size - 1.0)
    var = (m * (2 * size + 5) - x1 - y1) / 18 + (2.0 * xtie * ytie) / m
    if size > 2:
        var += x0 * y0 / (9 * m * (size - 2))
    z = s / np.sqrt(var)
    return tau, float(2.0 * special.ndtr(-abs(z)))


def _full_column(
    plan: XPlan, values: np.ndarray, y: np.ndarray, y_dense: np.ndarray
) -> tuple[int, tuple[int, float, float]]:
    """S and the y tie terms of one column, from scratch."""
    sel = plan.sel
    size = int(sel.size)
    yd = np.ascontiguousarray(y_dense[sel], dtype=np.intp)
    y_terms = tie_sums(np.bincount(yd)) if size else (0, 0.0, 0.0)
    if size < 2:
        return 0, y_terms
    if _kendall_dis is None:  # pragma: no cover
        tau = stats.kendalltau(values[sel], y[sel]).statistic
        tot = size * (size - 1) // 2
        s = int(round(tau * np.sqrt(tot - plan.xtie) * np.sqrt(tot - y_terms[0])))
        return s, y_terms
    dis = int(_kendall_dis(plan.xd, yd))
    ntie = _joint_ties(plan.xd, yd) if plan.xtie else 0
    tot = size * (size - 1) // 2
    return tot - plan.xtie - y_terms[0] + ntie - 2 * dis, y_terms


class KendallCache:
    """S per column for the last (human vector, mask); see the module docstring."""

    def __init__(self) -> None:
        self._y: np.ndarray | None = None
        self._mask: np.ndarray | None = None
        self._s: np.ndarray | None = None

    def _single_change(self, y: np.ndarray, mask: np.ndarray) -> int | None:
        if self._y is None or self._mask is None or self._y.shape != y.shape:
            return None
        if self._mask.shape != mask.shape:
            return None
        same = (y == self._y) | (np.isnan(y) & np.isnan(self._y))
        changed = np.flatnonzero(~same)
        if changed.size != 1:
            return None
        k = int(changed[0])
        rows = np.flatnonzero((mask != self._mask).any(axis=1))
        if rows.size > 1 or (rows.size == 1 and rows[0] != k):
            return None
        return k

    def _delta(self, x: np.ndarray, y: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
        assert self._y is not None and self._mask is not None
        others = mask.copy()
        others[k] = False  # the other items of each column (the same before and after)
        others &= np.isfinite(x[k])[None, :]  # columns without a value for k do not change
        xk = np.where(np.isfinite(x[k]), x[k], 0.0)
        weights = np.where(others, np.sign(xk[None, :] - np.where(others, x, 0.0)), 0.0)
        filled = np.where(np.isfinite(y), y, 0.0)
        delta = np.zeros(x.shape[1])
        if mask[k].any():
            delta += np.sign(y[k] - filled) @ weights * mask[k]
        if self._mask[k].any():
            delta -= np.sign(self._y[k] - filled) @ weights * self._mask[k]
        return delta

    def compute(
        self, x: np.ndarray, y: np.ndarray, mask: np.ndarray, ranks: MaskedRanks
    ) -> tuple[np.ndarray, np.ndarray]:
        ranks.ranks(mask)  # brings the x plans up to this mask
        m = x.shape[1]
        y_dense = dense_ranks(y)
        k = self._single_change(y, mask)
        if k is not None and self._s is not None:
            s = self._s + np.rint(self._delta(x, y, mask, k)).astype(np.int64)
            shared = bool((mask == mask[:, :1]).all())
            shared_terms = tie_sums(np.bincount(y_dense[mask[:, 0]])) if shared else None

            def finish(j: int) -> tuple[float, float]:
                plan = ranks.plan(j)
                terms = shared_terms
                if terms is None:
                    terms = (
                        tie_sums(np.bincount(y_dense[plan.sel])) if plan.sel.size else (0, 0.0, 0.0)
                    )
                return _finish(int(s[j]), plan, terms, x[:, j], y)

            results = [finish(j) for j in range(m)]
        else:

            def full(j: int) -> tuple[int, float, float]:
                plan = ranks.plan(j)
                s_j, terms = _full_column(plan, x[:, j], y, y_dense)
                tau, p = _finish(s_j, plan, terms, x[:, j], y)
                return s_j, tau, p

            out = thread_map(full, list(range(m)))
            s = np.array([r[0] for r in out], dtype=np.int64)
            results = [(r[1], r[2]) for r in out]
        self._y, self._mask, self._s = y.copy(), mask.copy(), s
        tau = np.array([r[0] for r in results], dtype=np.float64)
        p = np.array([r[1] for r in results], dtype=np.float64)
        return tau, p


def kendall_columns(
    x: np.ndarray,
    y: np.ndarray,
    mask: np.ndarray,
    *,
    order: ColumnOrder | None = None,
    ranks: MaskedRanks | None = None,
    cache: KendallCache | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Kendall τ-b with scipy's p-value for every column of x against y over `mask`."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    y = np.asarray(y, dtype=np.float64)
    if ranks is None:
        ranks = MaskedRanks(x, order or ColumnOrder.of(x))
    return (cache or KendallCache()).compute(x, y, mask, ranks)


__all__ = ["KendallCache", "kendall_columns", "x_plan"]
