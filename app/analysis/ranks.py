"""Column ranks that survive a changing subset of items.

A dashboard recomputes Spearman and Kendall after every new rating, yet the metric values
do not change: only which items have a human score does. So each metric column is sorted
once (`ColumnOrder`), and the mid-ranks of any subset of its items come from that order in
linear time — no sort per refresh.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.analysis.parallel import thread_map


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
        # One sort per column, on the analysis threads (numpy sorts release the GIL).
        sorted_cols = thread_map(lambda j: np.argsort(columns[j], kind="stable"), list(range(m)))
        order = np.stack(sorted_cols, axis=1) if m else np.empty((n, 0), dtype=np.intp)
        ordered = np.take_along_axis(values, order, axis=0)
        new_group = np.ones((n, m), dtype=bool)
        if n > 1:
            # NaNs never compare equal, so each missing value is its own group (masked later).
            new_group[1:] = ordered[1:] != ordered[:-1]
        # Column-major cumsum numbers the groups of column 0 first, then column 1, ...
        group = np.cumsum(new_group.T.ravel()).reshape(m, n).T - 1
        n_groups = int(group[-1, -1]) + 1 if n else 0
        return cls(order=order, group=np.ascontiguousarray(group), n_groups=n_groups)

    @property
    def shape(self) -> tuple[int, int]:
        n, m = self.order.shape
        return n, m

    def column_has_ties(self) -> np.ndarray:
        """Per column: whether any two of its values are equal (NaNs aside)."""
        n, m = self.shape
        if n < 2:
            return np.zeros(m, dtype=bool)
        return np.asarray((self.group[1:] == self.group[:-1]).any(axis=0))

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
