"""What the dashboard's "Which metric" tab shows: the metrics ranked in significance
clusters, the ranking measure per category of an item attribute, the p-value matrix, and
whether that ranking has settled (`compute_stability`).

Everything is the meta-evaluation engine's (`meaningbench.analysis.metaeval`,
`meaningbench.analysis.metaeval_significance`) on the study file as it is now, read by
`meaningbench.analysis.metaeval_study`; this module only chooses what the tab asks for and
turns the engine's refusals into a message. Qt-free: the tab runs it as a worker job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from meaningbench.analysis.metaeval import DEFAULT_GROUPING, GROUPING_NAMES, MetaEvalData, evaluate
from meaningbench.analysis.metaeval_significance import (
    CLUSTER_LINE,
    CLUSTER_MEANING,
    Ranking,
    p_text,
    rank_metrics,
)
from meaningbench.analysis.metaeval_stability import (
    HISTORY,
    TREND,
    Progress,
    Stability,
    StabilityOptions,
    ranking_stability,
)
from meaningbench.analysis.metaeval_study import metaeval_data_from_study, metaeval_snapshots
from meaningbench.db.study import open_study
from meaningbench.errors import UserError
from meaningbench.queries.raters import MACHINE_MARK, MACHINE_TAG, machine_columns

# The measures a ranking can use (SPA is made of p-values itself: the engine refuses to
# rank by it), with the names the tab shows.
MEASURE_CHOICES = {
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "kendall_b": "Kendall τb",
    "acc_eq_star": "acc*eq (ties calibrated)",
    "acc_eq": "acc_eq (pairwise accuracy)",
    "pdp": "PDP",
    "tau_like": "tau-like (LENS)",
}
# The groupings the tab offers, by their one name (the report's and the command's too).
GROUPING_CHOICES = {
    key: GROUPING_NAMES[key][:1].upper() + GROUPING_NAMES[key][1:]
    for key in ("none", "item", "system")
}
TEST_CHOICES = {
    "perm-both": "PERM-BOTH",
    "boot-both": "BOOT-BOTH",
    "perm-items": "Permute items",
    "perm-systems": "Permute systems",
}
RESAMPLES = 1000
ALPHA = 0.05
__all__ = [
    "CLUSTER_LINE",
    "CLUSTER_MEANING",
    "GROUPING_CHOICES",
    "MEASURE_CHOICES",
    "TEST_CHOICES",
    "Stability",  # the screens read the signal's type from here
    "WhichMetric",
    "WhichMetricOptions",
    "compute_stability",
    "compute_which_metric",
    "p_text",
    "stability_options",
    "which_metric_of",
]


@dataclass(frozen=True)
class WhichMetricOptions:
    """What to rank by, and how the significance behind the clusters is tested."""

    dimension: str = "meaning"
    measure: str = "pearson"
    group_by: str = DEFAULT_GROUPING
    test: str = "perm-both"
    by: str | None = None  # the item attribute whose categories the bars show
    resamples: int = RESAMPLES
    seed: int = 0
    alpha: float = ALPHA
    tie_threshold: float = 5.0


@dataclass
class WhichMetric:
    """The tab's figures for one set of options, or the reason there are none."""

    options: WhichMetricOptions
    attributes: list[str] = field(default_factory=list)  # what `by` may name
    ranking: Ranking | None = None
    # One row per (metric, category): measure value or None with the reason why; the
    # "" category is all outputs. Metrics in ranking order.
    categories: pd.DataFrame = field(default_factory=pd.DataFrame)
    n_outputs: int = 0
    message: str | None = None  # why there is nothing to rank
    # Metric → the machine raters its scores were stored as (`judge --as-rater`).
    machine: dict[str, list[str]] = field(default_factory=dict)

    def shown_name(self, metric: str) -> str:
        """The metric as the tab names it: a judge stored as a rater carries the mark."""
        return f"{metric} {MACHINE_MARK}" if metric in self.machine else metric

    def machine_note(self, metric: str) -> str:
        raters = self.machine.get(metric)
        if not raters:
            return ""
        return (
            f"{MACHINE_MARK} {MACHINE_TAG}: also stored as the machine rater "
            f"{', '.join(raters)}. It is ranked here as a metric; its ratings are never part "
            "of the human scores it is ranked against."
        )

    @property
    def by(self) -> str | None:
        """The attribute the bars break down by (None when the study has none)."""
        return self.options.by if self.options.by in self.attributes else None

    def p_values(self) -> pd.DataFrame:
        """The p-value matrix in ranking order ([A, B] = p of "A is better than B")."""
        if self.ranking is None:
            return pd.DataFrame()
        order = self.ranking.order
        return self.ranking.p_values.loc[order, order]

    def ranking_frame(self) -> pd.DataFrame:
        """Cluster, metric, value and 95% interval, best first (for the table and CSV)."""
        r = self.ranking
        if r is None:
            return pd.DataFrame(columns=["cluster", "metric", "value", "low", "high"])
        rows = []
        for m in r.order:
            lo, hi = r.intervals.get(m, (None, None))
            rows.append(
                {"cluster": r.clusters[m], "metric": m, "value": r.values[m], "low": lo, "high": hi}
            )
        for m, why in r.reasons.items():
            rows.append({"cluster": None, "metric": m, "value": None, "low": None, "high": None,
                         "not_defined": why})  # fmt: skip
        frame = pd.DataFrame(rows)
        if self.machine:
            frame["machine_rater"] = [", ".join(self.machine.get(m, [])) for m in frame["metric"]]
        return frame


def _category_frame(data: MetaEvalData, options: WhichMetricOptions, by: str | None) -> Any:
    table = evaluate(
        data,
        [options.measure],
        group_by=options.group_by,
        by=by,
        tie_threshold=options.tie_threshold,
        seed=options.seed,
    )
    return pd.DataFrame(
        [
            {
                "metric": v.metric,
                "category": v.category,
                "value": v.value,
                "not_defined": v.reason,
                "n_outputs": v.n_outputs,
            }
            for v in table.values
        ]
    )


def which_metric_of(data: MetaEvalData, options: WhichMetricOptions) -> WhichMetric:
    """The ranking, the per-category values and the p-values of `data`."""
    attributes = sorted(data.categories)
    out = WhichMetric(options=options, attributes=attributes)
    keep = data.common()
    out.n_outputs = int(keep.sum())
    if not data.metric_names:
        out.message = "No metric runs yet: score the study to rank its metrics."
        return out
    if out.n_outputs < 2:
        out.message = "Needs two rated outputs with every metric's score, or more."
        return out
    try:
        out.ranking = rank_metrics(
            data,
            options.measure,
            group_by=options.group_by,
            test=options.test,
            resamples=options.resamples,
            seed=options.seed,
            alpha=options.alpha,
            tie_threshold=options.tie_threshold,
        )
        # The ranking's grouping (tau_like always pairs outputs of one source).
        frame = _category_frame(data, options, out.by)
    except UserError as exc:
        out.message = str(exc)
        out.ranking = None
        return out
    order = {m: k for k, m in enumerate(out.ranking.order + list(out.ranking.reasons))}
    frame["rank"] = frame["metric"].map(order)
    out.categories = frame.sort_values(["rank", "category"]).drop(columns="rank")
    out.categories = out.categories.reset_index(drop=True)
    return out


def compute_which_metric(path: Path, options: WhichMetricOptions) -> WhichMetric:
    """Read the study file as it is now and rank its metrics (a worker's job)."""
    with open_study(path, allow_read_only=True) as study:
        try:
            data = metaeval_data_from_study(study, options.dimension)
        except UserError as exc:
            return WhichMetric(options=options, message=str(exc))
        machine = machine_columns(study, data.metric_names)
    out = which_metric_of(data, options)
    out.machine = machine
    return out


def stability_options(options: WhichMetricOptions) -> StabilityOptions:
    """The stopping signal tests the ranking the tab shows, with its test and seed."""
    return StabilityOptions(
        measure=options.measure,
        group_by=options.group_by,
        test=options.test,
        alpha=options.alpha,
        tie_threshold=options.tie_threshold,
        seed=options.seed,
        ranking_resamples=options.resamples,
    )


def compute_stability(
    path: Path, options: WhichMetricOptions, progress: Progress | None = None
) -> Stability:
    """How settled the tab's ranking is, from the study's ratings as they are now and as
    they stood along the way (a worker's job; `progress` is told after each resample)."""
    settings = stability_options(options)
    with open_study(path, allow_read_only=True) as study:
        try:
            snaps = metaeval_snapshots(study, HISTORY + TREND, options.dimension)
        except UserError as exc:
            return Stability.nothing(settings, str(exc))
    return ranking_stability(snaps, settings, progress)
