"""What the dashboard's "Which metric" tab shows: the metrics ranked in significance
clusters, the ranking measure per category of an item attribute, the p-value matrix, and
whether that ranking has settled (`compute_stability`).

Everything is the meta-evaluation engine's (`meaningbench.analysis.metaeval`,
`meaningbench.analysis.metaeval_significance`) on the study file as it is now, read by
`meaningbench.analysis.metaeval_study`; this module only chooses what the tab asks for and
turns the engine's refusals into a message. Qt-free: the tab runs it as a worker job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from meaningbench.analysis.metaeval import MetaEvalData, MetaEvalTable, evaluate
from meaningbench.analysis.metaeval_choices import DEFAULT_GROUPING, GROUPING_NAMES
from meaningbench.analysis.metaeval_humans import (
    GAP_WORDS,
    HumanBaseline,
    human_baseline,
    row_order,
)
from meaningbench.analysis.metaeval_presets import PRESETS, Preset
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
    "pairs": "Pairwise (MTME)",
}
# A preset sets the measure, the grouping and the test as its segment-level task does
# (`analysis.metaeval_presets`); "" is the user's own choice.
PRESET_CHOICES = {"": "Custom", **{key: key.upper() for key in PRESETS}}
RESAMPLES = 1000
ALPHA = 0.05
__all__ = [
    "CLUSTER_LINE",
    "CLUSTER_MEANING",
    "GAP_WORDS",
    "GROUPING_CHOICES",
    "MEASURE_CHOICES",
    "PRESET_CHOICES",
    "HumanBaseline",
    "TEST_CHOICES",
    "Stability",  # the screens read the signal's type from here
    "WhichMetric",
    "WhichMetricOptions",
    "compute_stability",
    "compute_which_metric",
    "p_text",
    "preset_of",
    "with_preset",
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
    # The preset whose task the options are (its early stopping and intervals apply).
    preset: str | None = None


def preset_of(options: WhichMetricOptions) -> Preset | None:
    """The preset the options follow: named, and its task still the one asked for."""
    preset = PRESETS.get(options.preset or "")
    if preset is None:
        return None
    task = preset.segment_task
    same = (options.measure, options.group_by, options.test) == (
        task.measure,
        task.group_by,
        task.test,
    )
    return preset if same else None


def with_preset(options: WhichMetricOptions, name: str) -> WhichMetricOptions:
    """`options` with the measure, grouping and test of preset `name`'s segment-level task
    (what choosing the preset in the tab sets); "" keeps them and drops the preset."""
    preset = PRESETS.get(name)
    if preset is None:
        return replace(options, preset=None)
    task = preset.segment_task
    return replace(
        options, measure=task.measure, group_by=task.group_by, test=task.test, preset=name
    )


# Steps of a ranking job, for its progress: (done, total, what is being done).
Step = Callable[[int, int, str], None]
STEPS = ("Reading the study", "Ranking the metrics", "Per category", "Human rows")


@dataclass(frozen=True)
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
    # Each human rater and the one-rater baseline on the ranking's measure, or why none.
    humans: HumanBaseline | None = None

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

    def gap(self, metric: str) -> float | None:
        """The metric's value minus the one-rater baseline (None: either is missing)."""
        if self.humans is None or self.ranking is None:
            return None
        return self.humans.gap(self.ranking.values.get(metric))

    def ranking_frame(self) -> pd.DataFrame:
        """Cluster, metric, value, 95% interval and distance from the one-rater baseline,
        best first, the one-rater baseline (`kind` "human") placed by its value among the
        metrics and each rater's row after them (for the table and CSV)."""
        r = self.ranking
        if r is None:
            return pd.DataFrame(columns=["cluster", "metric", "value", "low", "high"])
        rows: list[dict[str, Any]] = []
        for m in r.order:
            lo, hi = r.intervals.get(m, (None, None))
            rows.append(
                {"cluster": r.clusters[m], "metric": m, "value": r.values[m], "low": lo,
                 "high": hi, "kind": "metric", "gap_to_one_rater": self.gap(m)}
            )  # fmt: skip
        for h in self.humans.rows if self.humans is not None else []:
            if h.value is not None:
                rows.append({"cluster": None, "metric": h.label, "value": h.value, "low": None,
                             "high": None, "kind": "human", "gap_to_one_rater": None})  # fmt: skip
        # The one-rater baseline among the metrics by value; each rater below them, so a
        # short window keeps every metric and the baseline in sight.
        rows.sort(key=lambda row: row_order(row["kind"], row["metric"], float(row["value"])))
        for m, why in r.reasons.items():
            rows.append({"cluster": None, "metric": m, "value": None, "low": None, "high": None,
                         "kind": "metric", "not_defined": why})  # fmt: skip
        for h in self.humans.rows if self.humans is not None else []:
            if h.value is None:
                rows.append({"cluster": None, "metric": h.label, "value": None, "low": None,
                             "high": None, "kind": "human", "not_defined": h.reason})  # fmt: skip
        frame = pd.DataFrame(rows)
        if self.machine:
            frame["machine_rater"] = [", ".join(self.machine.get(m, [])) for m in frame["metric"]]
        return frame


def _category_frame(table: MetaEvalTable) -> Any:
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


def which_metric_of(
    data: MetaEvalData, options: WhichMetricOptions, step: Step | None = None
) -> WhichMetric:
    """The ranking, the per-category values, the p-values and the human rows of `data`;
    `step` is told as each part starts (a job checks for a cancel there)."""
    tell: Step = step or (lambda _done, _total, _what: None)
    preset = preset_of(options)
    attributes = sorted(data.categories)
    keep = data.common()
    n_outputs = int(keep.sum())
    if not data.metric_names:
        why = "No metric runs yet: score the study to rank its metrics."
        return WhichMetric(options, attributes, n_outputs=n_outputs, message=why)
    if n_outputs < 2:
        why = "Needs two rated outputs with every metric's score, or more."
        return WhichMetric(options, attributes, n_outputs=n_outputs, message=why)
    by = WhichMetric(options, attributes).by
    try:
        tell(1, len(STEPS), STEPS[1])
        # Overall and per category at once; the ranking takes its values from it.
        table = evaluate(
            data,
            [options.measure],
            group_by=options.group_by,
            by=by,
            tie_threshold=options.tie_threshold,
            seed=options.seed,
        )
        ranking = rank_metrics(
            data,
            options.measure,
            group_by=options.group_by,
            test=options.test,
            resamples=options.resamples,
            seed=options.seed,
            alpha=options.alpha,
            tie_threshold=options.tie_threshold,
            intervals=True if preset is None else preset.intervals,
            early_stop=None if preset is None else preset.early_stop,
            table=table,
        )
        tell(2, len(STEPS), STEPS[2])
        frame = _category_frame(table)
    except UserError as exc:
        return WhichMetric(options, attributes, n_outputs=n_outputs, message=str(exc))
    order = {m: k for k, m in enumerate(ranking.order + list(ranking.reasons))}
    frame["rank"] = frame["metric"].map(order)
    categories = frame.sort_values(["rank", "category"]).drop(columns="rank")
    categories = categories.reset_index(drop=True)
    tell(3, len(STEPS), STEPS[3])
    try:
        humans = human_baseline(
            data,
            ranking.measure,
            ranking.group_by,
            tie_threshold=options.tie_threshold,
            seed=options.seed,
        )
    except UserError as exc:
        why = f"no human row: {exc}"
        humans = HumanBaseline(ranking.measure, ranking.group_by, reason=why)
    tell(len(STEPS), len(STEPS), "Done")
    return WhichMetric(
        options,
        attributes,
        ranking=ranking,
        categories=categories,
        n_outputs=n_outputs,
        humans=humans,
    )


def compute_which_metric(
    path: Path, options: WhichMetricOptions, step: Step | None = None
) -> WhichMetric:
    """Read the study file as it is now and rank its metrics (a worker's job; `step` is
    told as each part starts)."""
    if step is not None:
        step(0, len(STEPS), STEPS[0])
    with open_study(path, allow_read_only=True) as study:
        try:
            data = metaeval_data_from_study(study, options.dimension)
        except UserError as exc:
            return WhichMetric(options=options, message=str(exc))
        machine = machine_columns(study, data.metric_names)
    return replace(which_metric_of(data, options, step), machine=machine)


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
