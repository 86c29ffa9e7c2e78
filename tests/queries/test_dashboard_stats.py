"""The dashboard's statistics without Qt: bar series, merged live and bootstrap tables."""

from __future__ import annotations

import numpy as np
import pytest

from meaningbench.analysis.correlation import correlate_many
from meaningbench.queries.dashboard_stats import bar_series, combine, least_squares, sort_names


def _table(n_boot: int, seed: int = 0):  # noqa: ANN202
    rng = np.random.default_rng(seed)
    y = rng.normal(size=120)
    x = np.column_stack([y + rng.normal(scale=s, size=120) for s in (0.3, 1.0, 3.0)])
    x[:5, 2] = np.nan
    return correlate_many(x, y, ["good", "fair", "poor"], n_boot=n_boot, seed=0)


def test_bar_series_sorts_and_carries_intervals() -> None:
    table = _table(200)
    series = bar_series(table, "pearson", "value")
    assert series.names == ["good", "fair", "poor"]
    for k, name in enumerate(series.names):
        r = table.results[name]
        assert (series.values[k], series.lows[k], series.highs[k]) == (r.pearson, *r.pearson_ci)
        assert series.n[k] == r.n and series.p[k] == r.pearson_p
    assert series.has_intervals
    assert bar_series(table, "kendall").has_intervals is False
    assert bar_series(table, "pearson", "name").names == ["fair", "good", "poor"]
    assert "good: r = " in series.describe(0) and "n = 120" in series.describe(0)


def test_sort_puts_missing_values_last() -> None:
    values = {"b": 0.2, "a": float("nan"), "c": 0.9, "D": 0.2}
    assert sort_names(values, "value") == ["c", "b", "D", "a"]
    assert sort_names(values, "name") == ["a", "b", "c", "D"]


def test_combine_takes_points_live_and_intervals_from_the_bootstrap() -> None:
    live = _table(0, seed=1)
    boot = _table(300, seed=2)
    merged = combine(live, boot, live_has_kendall=False)
    assert merged is not None and merged.n_boot == 300
    for name, r in merged.results.items():
        assert r.pearson == live.results[name].pearson
        assert r.pearson_ci == boot.results[name].pearson_ci
        assert r.kendall == boot.results[name].kendall
    kept = combine(live, boot, live_has_kendall=True)
    assert kept.results["good"].kendall == live.results["good"].kendall
    assert combine(None, boot, live_has_kendall=False) is boot
    assert combine(live, None, live_has_kendall=False) is live


def test_least_squares_is_numpy_polyfit() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 100, 50)
    y = 0.7 * x + rng.normal(0, 5, 50)
    y[4] = np.nan
    keep = np.isfinite(y)
    assert least_squares(x, y) == pytest.approx(tuple(np.polyfit(x[keep], y[keep], 1)))
    assert least_squares(np.ones(5), np.arange(5.0)) is None
