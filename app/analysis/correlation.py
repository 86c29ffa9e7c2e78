"""Metric-versus-human correlation results: one metric (`correlate`) or many at once.

`correlate_many` is the engine: point statistics for every column (stats.py), then one
shared bootstrap for the Pearson and Spearman intervals (bootstrap.py) — the same
resamples for every metric, so intervals of two metrics are comparable. Pass `n_boot=0`
for the cheap path (no intervals), which is what a live dashboard refresh uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from meaningbench.analysis.bootstrap import bootstrap
from meaningbench.analysis.kendall import KendallCache
from meaningbench.analysis.ranks import ColumnOrder, MaskedRanks
from meaningbench.analysis.stats import (
    as_matrix,
    pearson_columns,
    point_statistics,
    valid_mask,
    williams_test,
)

Interval = tuple[float, float]


@dataclass
class CorrelationResult:
    """One metric against the human scores. Intervals are percentile bootstrap intervals."""

    n: int
    pearson: float
    pearson_p: float
    pearson_ci: Interval
    spearman: float
    spearman_p: float
    spearman_ci: Interval
    kendall: float
    kendall_p: float
    r2: float
    rmse: float
    system_pearson: float
    metric: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("metric")
        out["pearson_ci"] = list(self.pearson_ci)
        out["spearman_ci"] = list(self.spearman_ci)
        return out


STAT_COLUMNS = [
    "n",
    "pearson",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "kendall",
    "kendall_p",
    "r2",
    "rmse",
    "system_pearson",
]


@dataclass(frozen=True)
class CorrelationTable:
    """Every metric run against one human dimension; the rows of the correlation table."""

    results: dict[str, CorrelationResult]
    dimension: str = "meaning"
    z: bool = False
    n_items: int = 0  # items with a human score
    n_boot: int = 0
    unit: str = "items"  # what the bootstrap resampled: items | groups
    confidence: float = 0.95
    spearman_ci_method: str = "none"  # rerank | fixed | none
    extra: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for name, r in self.results.items():
            rows.append(
                {
                    "metric": name,
                    "n": r.n,
                    "pearson": r.pearson,
                    "pearson_p": r.pearson_p,
                    "pearson_ci_low": r.pearson_ci[0],
                    "pearson_ci_high": r.pearson_ci[1],
                    "spearman": r.spearman,
                    "spearman_p": r.spearman_p,
                    "spearman_ci_low": r.spearman_ci[0],
                    "spearman_ci_high": r.spearman_ci[1],
                    "kendall": r.kendall,
                    "kendall_p": r.kendall_p,
                    "r2": r.r2,
                    "rmse": r.rmse,
                    "system_pearson": r.system_pearson,
                }
            )
        frame = pd.DataFrame(rows, columns=["metric", *STAT_COLUMNS])
        return frame.set_index("metric")

    def latex_frame(self) -> pd.DataFrame:
        """Paper layout: coefficient with its interval, Kendall, R², RMSE, system level."""
        from meaningbench.analysis.export import interval_text

        rows = {}
        for name, r in self.results.items():
            rows[name] = {
                "n": r.n,
                "Pearson": interval_text(r.pearson, *r.pearson_ci),
                "Spearman": interval_text(r.spearman, *r.spearman_ci),
                "Kendall": interval_text(r.kendall, np.nan, np.nan),
                "R²": r.r2,
                "RMSE": r.rmse,
                "system r": r.system_pearson,
            }
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "metric"
        return frame

    def to_json(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "z": self.z,
            "n": self.n_items,
            "n_boot": self.n_boot,
            "unit": self.unit,
            "spearman_ci_method": self.spearman_ci_method,
            "metrics": {name: r.to_dict() for name, r in self.results.items()},
            # What the table was computed from (label sets read, items from labels, ...).
            **{k: v for k, v in self.extra.items() if k not in ("metrics", "n")},
        }

    def sorted_by(self, statistic: str = "pearson", descending: bool = True) -> list[str]:
        """Metric names sorted by a statistic (missing values last), for bar charts."""
        values = {k: getattr(v, statistic) for k, v in self.results.items()}
        finite = [k for k, v in values.items() if np.isfinite(v)]
        rest = [k for k in values if k not in finite]
        return sorted(finite, key=lambda k: values[k], reverse=descending) + rest


def encode_labels(labels: Sequence[Any] | np.ndarray | None) -> np.ndarray | None:
    """Integer codes for labels (systems, source groups); None / NaN → -1."""
    if labels is None:
        return None
    if isinstance(labels, np.ndarray) and np.issubdtype(labels.dtype, np.integer):
        return labels.astype(np.intp, copy=False)  # already codes
    codes, _ = pd.factorize(pd.Series(list(labels), dtype="object"), use_na_sentinel=True)
    return np.asarray(codes, dtype=np.intp)


def correlate_many(
    metric_values: np.ndarray,
    human_values: np.ndarray,
    names: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    groups: Sequence[Any] | np.ndarray | None = None,
    systems: Sequence[Any] | np.ndarray | None = None,
    rating_values: np.ndarray | None = None,
    confidence: float = 0.95,
    kendall: bool = True,
    spearman_ci: str = "auto",
    order: ColumnOrder | None = None,
    ranks: MaskedRanks | None = None,
    kendall_cache: KendallCache | None = None,
    dimension: str = "meaning",
    z: bool = False,
) -> CorrelationTable:
    """Correlate every column of `metric_values` (n × m) with `human_values` (n).

    `rating_values` are the human scores on the metric's scale for R² and RMSE (defaults to
    `human_values`); `groups` switches the bootstrap to resampling source groups; `systems`
    gives the system-level correlation; `order` is a cached `ColumnOrder.of(metric_values)`
    and `ranks` a `MaskedRanks` of the same matrix and `kendall_cache` a `KendallCache`,
    both kept between calls (the live path).
    """
    x = as_matrix(metric_values)
    y = np.asarray(human_values, dtype=np.float64)
    if x.shape[0] != y.shape[0] or x.shape[1] != len(names):
        raise ValueError(f"shapes disagree: values {x.shape}, human {y.shape}, {len(names)} names")
    if ranks is None:
        ranks = MaskedRanks(x, order or ColumnOrder.of(x))
    point = point_statistics(
        x,
        y,
        rating=rating_values,
        systems=encode_labels(systems),
        ranks=ranks,
        kendall=kendall,
        kendall_cache=kendall_cache,
    )
    m = x.shape[1]
    p_ci = s_ci = np.full((m, 2), np.nan)
    method, unit = "none", "items" if groups is None else "groups"
    if n_boot > 0:
        samples = bootstrap(
            x,
            y,
            n_boot=n_boot,
            seed=seed,
            groups=None if groups is None else np.asarray(list(groups), dtype=object),
            spearman=spearman_ci,
            ranks=ranks,
        )
        p_ci = samples.interval("pearson", confidence)
        s_ci = samples.interval("spearman", confidence)
        method, unit = samples.spearman_method, samples.unit
    results = {}
    for j, name in enumerate(names):
        col = point.column(j)
        results[name] = CorrelationResult(
            n=int(col.pop("n")),
            pearson_ci=(float(p_ci[j, 0]), float(p_ci[j, 1])),
            spearman_ci=(float(s_ci[j, 0]), float(s_ci[j, 1])),
            metric=name,
            **col,
        )
    rated = int(np.isfinite(y).sum())
    return CorrelationTable(
        results=results,
        dimension=dimension,
        z=z,
        n_items=rated,
        n_boot=n_boot,
        unit=unit,
        confidence=confidence,
        spearman_ci_method=method,
    )


def correlate(
    metric_values: Sequence[float] | np.ndarray,
    human_values: Sequence[float] | np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    groups: Sequence[Any] | np.ndarray | None = None,
    systems: Sequence[Any] | np.ndarray | None = None,
    rating_values: Sequence[float] | np.ndarray | None = None,
    confidence: float = 0.95,
) -> CorrelationResult:
    """One metric against human scores (NaN in either skips the item)."""
    table = correlate_many(
        np.asarray(metric_values, dtype=np.float64)[:, None],
        np.asarray(human_values, dtype=np.float64),
        ["metric"],
        n_boot=n_boot,
        seed=seed,
        groups=groups,
        systems=systems,
        rating_values=None if rating_values is None else np.asarray(rating_values, dtype=float),
        confidence=confidence,
    )
    result = table.results["metric"]
    result.metric = ""
    return result


def metric_correlations(
    metric_values: np.ndarray, names: Sequence[str], *, method: str = "pearson"
) -> pd.DataFrame:
    """Metric × metric correlations over the items both metrics scored (the heatmap)."""
    frame = pd.DataFrame(as_matrix(metric_values), columns=list(names))
    return frame.corr(method=method)


def williams_matrix(
    metric_values: np.ndarray,
    human_values: np.ndarray,
    names: Sequence[str],
) -> pd.DataFrame:
    """One-sided Williams p-values: cell (A, B) tests "A correlates better than B".

    Pearson correlations, each pair on the items where the humans and both metrics have a
    value (as WMT does); the diagonal is NaN.
    """
    x = as_matrix(metric_values)
    y = np.asarray(human_values, dtype=np.float64)
    m = x.shape[1]
    out = np.full((m, m), np.nan)
    base = valid_mask(x, y)
    for a in range(m):
        both = base & base[:, a : a + 1]
        r13 = pearson_columns(x, y, both)  # B with the humans, on the pair's items
        r12 = pearson_columns(np.broadcast_to(x[:, a : a + 1], x.shape), y, both)
        r23 = pearson_columns(x, x[:, a], both)  # B with A
        n = both.sum(axis=0)
        _, p = williams_test(r12, r13, r23, n, alternative="greater")
        out[a] = p
        out[a, a] = np.nan
    return pd.DataFrame(out, index=list(names), columns=list(names))
