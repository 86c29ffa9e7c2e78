"""Column ranks that survive a changing subset of items.

A dashboard recomputes Spearman and Kendall after every new rating, yet the metric values
do not change: only which items have a human score does. So each metric column is sorted
once (`ColumnOrder`), and the mid-ranks of any subset of its items come from that order in
linear time — no sort per refresh.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from meaningbench.analysis.parallel import thread_map


@dataclass(frozen=True)
class ColumnOrder:
    """The sort order of each column of an (n, m) matrix, with its tie groups.

    `order[:, j]` sorts column j ascending, missing values (NaN) last; `group[:, j]` is, in
    that sorted order, the index of the tie group (equal values share one) counted over all
    columns, so groups of column j follow those of column j-1 and never mix.
    """

    order: np.ndarray  # (n, m) intp
    group: np.ndarray  # (n, m) intp, non-decreasing down each column
    n_groups: int

    @classmethod
    def of(cls, values: np.ndarray) -> ColumnOrder:
        values = np.asarray(values, dtype=np.float64)
        if values.ndim == 1:
            values = values[:, None]
        n, m = values.shape
        columns = np.ascontiguousarray(values.T)
        # One sort per column, on the analysis threads (numpy sorts release the GIL). The
        # order inside a tie group does not matter to anything built on it, so the faster
        # unstable sort will do; NaNs still sort last.
        sorted_cols = thread_map(lambda j: np.argsort(columns[j]), list(range(m)))
        order = np.stack(sorted_cols, axis=1) if m else np.empty((n, 0), dtype=np.intp)
        ordered = np.take_along_axis(values, order, axis=0)
        new_group = np.ones((n, m), dtype=bool)
        if n > 1:
            # NaNs never compare equal, so each missing value is its own group (masked later).
            new_group[1:] = ordered[1:] != ordered[:-1]
        # Column-major cumsum numbers the groups of column 0 first, then column 1, ...
        group = np.cumsum(new_group.T.ravel()).reshape(m, n).T - 1
        n_groups = int(group[-1, -1]) + 1 if n and m else 0
        return cls(order=order, group=np.ascontiguousarray(group), n_groups=n_groups)

    @property
    def shape(self) -> tuple[int, int]:
        n, m = self.order.shape
        return n, m

    def midranks(self, mask: np.ndarray) -> np.ndarray:
        """Mid-ranks (1-based, ties averaged) of each column among its masked items.

        `mask` is (n, m), or (n,) for one subset shared by all columns. Items outside the
        mask get NaN. Equivalent to `scipy.stats.rankdata` on each column's masked values.
        """
        n, m = self.shape
        mask = np.asarray(mask, dtype=bool)
        if mask.ndim == 1:
            mask = np.broadcast_to(mask[:, None], (n, m))
        in_order = np.take_along_axis(mask, self.order, axis=0)
        counts = np.bincount(self.group.ravel(), weights=in_order.ravel(), minlength=self.n_groups)
        before = np.cumsum(counts) - counts
        # Reset the running count at each column's first group.
        first_group = self.group[0] if n else np.zeros(m, dtype=np.intp)
        start = before[first_group]
        ranks_sorted = before[self.group] - start[None, :] + (counts[self.group] + 1.0) / 2.0
        ranks_sorted = np.where(in_order, ranks_sorted, np.nan)
        ranks = np.empty((n, m), dtype=np.float64)
        np.put_along_axis(ranks, self.order, ranks_sorted, axis=0)
        return ranks


def dense_ranks(values: np.ndarray) -> np.ndarray:
    """1-based dense ranks of finite values (equal values share a rank); NaN → 0."""
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros(values.shape, dtype=np.intp)
    finite = np.isfinite(values)
    if finite.any():
        _, inverse = np.unique(values[finite], return_inverse=True)
        out[finite] = inverse + 1
    return out


@dataclass
class XPlan:
    """One column under one mask: its masked items in x order, x's tie groups, tie sums."""

    sel: np.ndarray  # item rows, sorted by x
    xd: np.ndarray  # tie-group number (1-based) of each, non-decreasing
    xtie: int
    x0: float
    x1: float


def tie_sums(counts: np.ndarray) -> tuple[int, float, float]:
    """Σt(t−1)/2, Σt(t−1)(t−2), Σt(t−1)(2t+5) over tie sizes t (scipy's kendalltau terms)."""
    c = counts[counts > 1].astype(np.float64)
    return (
        int((c * (c - 1) // 2).sum()),
        float((c * (c - 1.0) * (c - 2.0)).sum()),
        float((c * (c - 1.0) * (2.0 * c + 5.0)).sum()),
    )


class MaskedRanks:
    """Mid-ranks and Kendall plans of a matrix for the current item mask, kept between calls.

    A live refresh usually changes the mask by one row (an item gets its first rating) or
    not at all (another rating of a rated item). Then the ranks are updated in place — an
    item joining shifts the ranks above it by one and its tie group by a half — instead of
    being recomputed; larger changes recompute.
    """

    MAX_INCREMENTAL_ROWS = 2

    def __init__(self, values: np.ndarray, order: ColumnOrder | None = None) -> None:
        self.values = np.asarray(values, dtype=np.float64)
        if self.values.ndim == 1:
            self.values = self.values[:, None]
        self.order = order or ColumnOrder.of(self.values)
        self._mask: np.ndarray | None = None
        self._ranks: np.ndarray | None = None
        self._plans: dict[int, XPlan] = {}

    def ranks(self, mask: np.ndarray) -> np.ndarray:
        """(n, m) mid-ranks of each column among its masked items (NaN elsewhere)."""
        mask = np.asarray(mask, dtype=bool)
        if self._mask is not None and self._ranks is not None:
            changed = np.flatnonzero((mask != self._mask).any(axis=1))
            if changed.size == 0:
                return self._ranks
            if changed.size <= self.MAX_INCREMENTAL_ROWS:
                for row in changed:
                    self._update_row(int(row), mask[row])
                self._plans = {}
                return self._ranks
        self._ranks = self.order.midranks(mask)
        self._mask = mask.copy()
        self._plans = {}
        return self._ranks

    def _update_row(self, row: int, new: np.ndarray) -> None:
        assert self._mask is not None and self._ranks is not None
        old = self._mask[row]
        cols = np.flatnonzero(old != new)
        x = self.values[:, cols]
        v = x[row]
        others = self._mask[:, cols].copy()
        others[row] = False
        shift = (x > v).astype(np.float64) + 0.5 * (x == v)
        sign = np.where(new[cols], 1.0, -1.0)
        ranks = self._ranks[:, cols]
        ranks = np.where(others, ranks + sign * shift, ranks)
        below = (others & (x < v)).sum(axis=0)
        tied = (others & (x == v)).sum(axis=0)
        ranks[row] = np.where(new[cols], below + (tied + 2.0) / 2.0, np.nan)
        self._ranks[:, cols] = ranks
        self._mask[row, cols] = new[cols]

    def plan(self, j: int) -> XPlan:
        """The masked items of column j in x order with x's tie structure (cached)."""
        cached = self._plans.get(j)
        if cached is not None:
            return cached
        assert self._mask is not None, "call ranks(mask) first"
        made = x_plan(self.order, self._mask[:, j], j)
        self._plans[j] = made
        return made


def x_plan(order: ColumnOrder, mask: np.ndarray, j: int) -> XPlan:
    """Column j's items inside `mask` (n,) in x order, with x's tie groups and tie sums."""
    rows, group = order.order[:, j], order.group[:, j]
    keep = mask[rows]
    sel = rows[keep]
    xg = group[keep]
    xd = np.ascontiguousarray(xg - xg[0] + 1 if xg.size else xg, dtype=np.intp)
    xtie, x0, x1 = tie_sums(np.bincount(xd)) if xd.size else (0, 0.0, 0.0)
    return XPlan(sel=sel, xd=xd, xtie=xtie, x0=x0, x1=x1)
