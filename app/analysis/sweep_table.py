"""The sweep table: every configuration of a model/layer sweep against the human scores.

One row per model × metric × layer × variant: Pearson, Spearman and Kendall with bootstrap
intervals (the same resamples for every row), and RMSE and MAE on a common 0–1 scale —
the metric's 0–100 value divided by 100 (BERTScore F1 or the cosine, below 0 counted as
0), the human score mapped from its dimension's scale (min → 0, max → 1). The best
configuration (by Pearson, or Spearman) is marked and tested against the runner-up.
A configuration that has no scores says why (no rescaling baseline for that layer, a
failed run) instead of disappearing from the table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from meaningbench.analysis.live import StudyAnalysis
from meaningbench.analysis.metaeval import MetaEvalData
from meaningbench.analysis.metaeval_significance import Ranking, rank_metrics
from meaningbench.analysis.sweep_stats import (
    BestVersusRunnerUp,
    best_versus_runner_up,
    errors_01,
    kendall_interval,
)
from meaningbench.errors import UserError

RANK_BY = ("pearson", "spearman")
SCALE_NOTE = (
    "RMSE and MAE on 0–1: metric value / 100 (F1 or cosine, negatives as 0); human score "
    "mapped from its scale's minimum (0) to maximum (1)"
)


@dataclass(frozen=True)
class SweepEntry:
    """A configuration as the table needs it: what it is, its column, and why it has none."""

    model: str
    metric: str
    layer: int
    variant: str
    column: str  # the canonical metric name its scores are filed under
    status: str = "done"  # the scoring job's status of its run
    reason: str | None = None


@dataclass(frozen=True)
class SweepRow:
    entry: SweepEntry
    n: int = 0
    pearson: float = math.nan
    pearson_ci: tuple[float, float] = (math.nan, math.nan)
    spearman: float = math.nan
    spearman_ci: tuple[float, float] = (math.nan, math.nan)
    kendall: float = math.nan
    kendall_ci: tuple[float, float] = (math.nan, math.nan)
    rmse: float = math.nan
    mae: float = math.nan
    best: bool = False
    runner_up: bool = False
    cluster: int | None = None  # significance cluster of the ranking (1 = top)
    note: str = ""  # why there is nothing to show

    def to_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "model": e.model,
            "metric": e.metric,
            "layer": e.layer,
            "variant": e.variant,
            "column": e.column,
            "status": e.status,
            "n": self.n,
            "pearson": self.pearson,
            "pearson_ci_low": self.pearson_ci[0],
            "pearson_ci_high": self.pearson_ci[1],
            "spearman": self.spearman,
            "spearman_ci_low": self.spearman_ci[0],
            "spearman_ci_high": self.spearman_ci[1],
            "kendall": self.kendall,
            "kendall_ci_low": self.kendall_ci[0],
            "kendall_ci_high": self.kendall_ci[1],
            "rmse_01": self.rmse,
            "mae_01": self.mae,
            "best": self.best,
            "runner_up": self.runner_up,
            "cluster": self.cluster,
            "note": self.note,
        }


@dataclass(frozen=True)
class SweepTable:
    rows: list[SweepRow]
    dimension: str
    n_items: int  # rated regular items
    n_boot: int
    rank_by: str
    confidence: float = 0.95
    comparison: BestVersusRunnerUp | None = None
    ranking: Ranking | None = None  # the meta-evaluation engine's ranking of the configurations
    scale_note: str = SCALE_NOTE
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> SweepRow | None:
        return next((r for r in self.rows if r.best), None)

    @property
    def runner_up(self) -> SweepRow | None:
        return next((r for r in self.rows if r.runner_up), None)

    def to_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows])

    def to_json(self) -> dict[str, Any]:
        def clean(value: Any) -> Any:
            if isinstance(value, float) and not math.isfinite(value):
                return None
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            if isinstance(value, list | tuple):
                return [clean(v) for v in value]
            return value

        cleaned: dict[str, Any] = clean(
            {
                "dimension": self.dimension,
                "n_items": self.n_items,
                "n_boot": self.n_boot,
                "confidence": self.confidence,
                "rank_by": self.rank_by,
                "scale": self.scale_note,
                "rows": [r.to_dict() for r in self.rows],
                "best_vs_runner_up": self.comparison.to_dict() if self.comparison else None,
                "ranking": self.ranking.to_dict() if self.ranking else None,
                **self.extra,
            }
        )
        return cleaned


def sweep_table(
    analysis: StudyAnalysis,
    entries: Sequence[SweepEntry],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    rank_by: str = "pearson",
) -> SweepTable:
    """The table of `entries` from a study's analysis (its metric columns and ratings)."""
    if rank_by not in RANK_BY:
        raise UserError(f"rank by {rank_by!r}: choose {' or '.join(RANK_BY)}")
    names = analysis.metric_names
    scored = [e for e in entries if e.column in names]
    rows = {e: SweepRow(e) for e in entries}
    y, rating = analysis.human()
    human_01 = rating / 100.0
    if scored:
        columns = list(dict.fromkeys(e.column for e in scored))
        corr = analysis.correlations(
            n_boot=n_boot, seed=seed, confidence=confidence, columns=columns
        )
        for e in scored:
            result = corr.results[e.column]
            x = analysis.data.metric_values[:, names.index(e.column)]
            rmse, mae, _ = errors_01(x / 100.0, human_01)
            rows[e] = replace(
                rows[e],
                n=result.n,
                pearson=result.pearson,
                pearson_ci=result.pearson_ci,
                spearman=result.spearman,
                spearman_ci=result.spearman_ci,
                kendall=result.kendall,
                kendall_ci=kendall_interval(x, y, n_boot=n_boot, seed=seed, confidence=confidence),
                rmse=rmse,
                mae=mae,
            )
    for e, row in list(rows.items()):
        if e.column not in names or row.n == 0:
            note = e.reason or (
                "no scores" if e.status in ("done", "cached") else f"run {e.status}"
            )
            rows[e] = replace(row, note=note)
    marked, ranking, comparison = _mark_best(
        list(rows.values()), rank_by, analysis, n_boot=n_boot, seed=seed, confidence=confidence
    )
    return SweepTable(marked, analysis.dimension, int(np.isfinite(y).sum()), n_boot, rank_by,
                      confidence, comparison, ranking)  # fmt: skip


def _mark_best(
    rows: list[SweepRow],
    rank_by: str,
    analysis: StudyAnalysis,
    *,
    n_boot: int,
    seed: int,
    confidence: float,
) -> tuple[list[SweepRow], Ranking | None, BestVersusRunnerUp | None]:
    """The rows with best and runner-up as the meta-evaluation engine ranks the
    configurations (global level, PERM-BOTH, on the items every configuration scored),
    each with its significance cluster; the ranking; the best tested against the
    runner-up."""
    rows = list(rows)
    scored = [i for i, r in enumerate(rows) if math.isfinite(getattr(r, rank_by))]
    columns = list(dict.fromkeys(rows[i].entry.column for i in scored))
    if not columns:
        return rows, None, None
    names = analysis.metric_names
    values = analysis.data.metric_values
    y, _ = analysis.human()
    items = analysis.data.items
    data = MetaEvalData(
        human=y,
        metrics=values[:, [names.index(c) for c in columns]],
        metric_names=columns,
        systems=np.array([s if isinstance(s, str) else None for s in items["system"]], dtype=object)
        if "system" in items
        else np.full(y.size, None, dtype=object),
        sources=np.asarray(analysis.data.groups, dtype=object),
    )
    if not data.common().any():
        return rows, None, None
    ranking = rank_metrics(
        data,
        rank_by,
        group_by="none",
        test="perm-both",
        resamples=max(1, n_boot),
        seed=seed,
        intervals=False,
    )
    for i in scored:
        cluster = ranking.clusters.get(rows[i].entry.column) if n_boot > 0 else None
        rows[i] = replace(rows[i], cluster=cluster)
    order = [next(i for i in scored if rows[i].entry.column == c) for c in ranking.order]
    if not order:
        return rows, ranking, None
    rows[order[0]] = replace(rows[order[0]], best=True)
    if len(order) < 2:
        return rows, ranking, None
    rows[order[1]] = replace(rows[order[1]], runner_up=True)
    comparison = best_versus_runner_up(
        values[:, names.index(rows[order[0]].entry.column)],
        values[:, names.index(rows[order[1]].entry.column)],
        y,
        statistic=rank_by,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
    )
    return rows, ranking, comparison
