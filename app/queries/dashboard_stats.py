"""What the dashboard shows, computed without Qt: statistics, bar series, merged tables.

The live path (GUI thread, no bootstrap) and the worker path (bootstrap intervals) must
agree on what a statistic is and where its interval comes from, so both go through these
functions; the widgets only draw what comes out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from meaningbench.analysis.correlation import CorrelationTable
from meaningbench.analysis.export import interval_text


@dataclass(frozen=True)
class Statistic:
    key: str  # attribute of CorrelationResult
    label: str
    symbol: str
    interval: str | None  # attribute holding the bootstrap interval, when there is one
    p_value: str | None
    ceiling: bool  # the human ceiling (a maximum r) is meaningful on this scale
    needs_kendall: bool = False


STATISTICS: dict[str, Statistic] = {
    "pearson": Statistic("pearson", "Pearson r", "r", "pearson_ci", "pearson_p", True),
    "spearman": Statistic("spearman", "Spearman ρ", "ρ", "spearman_ci", "spearman_p", True),
    "kendall": Statistic("kendall", "Kendall τ", "τ", None, "kendall_p", False, True),
    "r2": Statistic("r2", "R² (value as prediction)", "R²", None, None, False),
    "system_pearson": Statistic("system_pearson", "System-level r", "system r", None, None, False),
}
SORTS = {"value": "Sort by value", "name": "Sort by name"}


@dataclass(frozen=True)
class BarSeries:
    """One bar per metric, top to bottom, with its interval (NaN where there is none)."""

    statistic: Statistic
    names: list[str]
    values: np.ndarray
    lows: np.ndarray
    highs: np.ndarray
    n: np.ndarray
    p: np.ndarray

    def __len__(self) -> int:
        return len(self.names)

    @property
    def has_intervals(self) -> bool:
        return bool((np.isfinite(self.lows) & np.isfinite(self.highs)).any())

    def describe(self, k: int) -> str:
        """The tooltip line of bar k: value, interval, p and n."""
        st = self.statistic
        text = f"{self.names[k]}: {st.symbol} = " + interval_text(
            float(self.values[k]), float(self.lows[k]), float(self.highs[k])
        )
        if np.isfinite(self.p[k]):
            text += f", p = {self.p[k]:.2g}"
        return text + f", n = {int(self.n[k])}"


def sort_names(values: dict[str, float], sort: str) -> list[str]:
    """Metric names by value (largest first, missing values last) or by name."""
    if sort == "name":
        return sorted(values, key=str.casefold)
    finite = [k for k, v in values.items() if np.isfinite(v)]
    rest = sorted((k for k in values if k not in finite), key=str.casefold)
    return sorted(finite, key=lambda k: (-values[k], k.casefold())) + rest


def bar_series(table: CorrelationTable, statistic: str, sort: str = "value") -> BarSeries:
    st = STATISTICS[statistic]
    values = {name: float(getattr(r, st.key)) for name, r in table.results.items()}
    names = sort_names(values, sort)
    results = [table.results[k] for k in names]
    if st.interval is not None:
        bounds = np.array([getattr(r, st.interval) for r in results], dtype=float)
    else:
        bounds = np.full((len(names), 2), np.nan)
    bounds = bounds.reshape(len(names), 2)
    p = [getattr(r, st.p_value) if st.p_value else np.nan for r in results]
    return BarSeries(
        statistic=st,
        names=names,
        values=np.array([values[k] for k in names], dtype=float),
        lows=bounds[:, 0],
        highs=bounds[:, 1],
        n=np.array([r.n for r in results], dtype=float),
        p=np.array(p, dtype=float),
    )


def combine(
    live: CorrelationTable | None,
    boot: CorrelationTable | None,
    *,
    live_has_kendall: bool,
) -> CorrelationTable | None:
    """The live point statistics with the intervals of the latest bootstrap table.

    The bootstrap table may be a few ratings behind; its intervals are kept until the next
    one arrives rather than dropped on every rating (bars would flicker). Kendall comes
    from the bootstrap table when the live path skipped it.
    """
    if live is None or boot is None:
        return live if live is not None else boot
    results = {}
    for name, r in live.results.items():
        b = boot.results.get(name)
        if b is None:
            results[name] = r
            continue
        changes: dict[str, object] = {"pearson_ci": b.pearson_ci, "spearman_ci": b.spearman_ci}
        if not live_has_kendall:
            changes.update(kendall=b.kendall, kendall_p=b.kendall_p)
        results[name] = replace(r, **changes)  # type: ignore[arg-type]
    return replace(
        live,
        results=results,
        n_boot=boot.n_boot,
        unit=boot.unit,
        confidence=boot.confidence,
        spearman_ci_method=boot.spearman_ci_method,
        extra=dict(live.extra),
    )


def least_squares(x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    """Slope and intercept of y on x, or None when x does not vary."""
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 2 or np.ptp(x) == 0:
        return None
    dx = x - x.mean()
    slope = float((dx * (y - y.mean())).sum() / (dx * dx).sum())
    return slope, float(y.mean() - slope * x.mean())
