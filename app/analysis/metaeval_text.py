"""Words and tables for a meta-evaluation: the methods paragraph a user can paste into a
paper, and the plain-number JSON of every figure."""

from __future__ import annotations

from typing import Any

import pandas as pd

from meaningbench.analysis.metaeval import MetaEvalTable
from meaningbench.analysis.metaeval_choices import GROUPING_NAMES
from meaningbench.analysis.metaeval_significance import Ranking
from meaningbench.core.wording import counted

MEASURE_TITLES = {
    "pearson": "Pearson's r",
    "spearman": "Spearman's ρ",
    "kendall_b": "Kendall's τ_b",
    "kendall_c": "Stuart's τ_c",
    "tau_a": "Kendall's τ_a",
    "tau_23": "WMT23's τ with ties (Deutsch et al., 2023)",
    "acc_eq": "pairwise accuracy with ties acc_eq (Deutsch et al., 2023)",
    "acc_eq_star": "tie-calibrated pairwise accuracy acc*_eq (Deutsch et al., 2023)",
    "pdp": "pairwise-difference Pearson (PDP)",
    "spa": "soft pairwise accuracy (SPA; Thompson et al., 2024)",
    "tau_like": "the Kendall tau-like of LENS/SimpEval (Maddela et al., 2023)",
}
GROUPING_WORDS = {
    "none": "one value over all outputs",
    "item": "one value per source over its outputs, averaged over sources",
    "system": "one value over the systems' mean scores",
    "per-system": "one value per system over its outputs, averaged over systems",
}
# How a methods section names a metric's options (others print as key = value).
OPTION_WORDS = {
    "reference_mode": "references",
    "model": "model",
    "layer": "layer",
    "idf": "idf weighting",
    "rescale": "baseline rescaling",
}
REFERENCE_WORDS = {
    "source": "the source sentence",
    "references": "the reference simplifications",
    "both": "the source and the references",
    "none": "none",
}
TEST_WORDS = {
    "perm-both": "the PERM-BOTH paired permutation test (Deutsch et al., 2021) in the variant "
    "of its reference code nlpstats, which swaps the two metrics' scores of whole systems "
    "and then of whole sources, so that an output is swapped when exactly one of its system "
    "and its source was (the WMT metrics tasks' MTME tool instead swaps each output on its "
    "own)",
    "perm-items": "a paired permutation test that swaps the two metrics' scores of whole sources",
    "perm-systems": "a paired permutation test that swaps the two metrics' scores of whole systems",
    "perm-outputs": "a paired permutation test that swaps the two metrics' scores of each "
    "output on its own (MTME's PermutationSigDiff, as the WMT metrics tasks use it)",
    "boot-both": "the BOOT-BOTH paired bootstrap test (Deutsch et al., 2021), which resamples "
    "systems and sources together (p-values by the shifted-null rule of Berg-Kirkpatrick "
    "et al., 2012)",
    "williams": "Williams' test of dependent correlations (Graham and Baldwin, 2014)",
    "pairs": "the pairwise permutation test of the WMT metrics tasks' MTME tool "
    "(PairwisePermutationSigDiff), which swaps the two metrics' outcomes of each compared "
    "pair of outputs (concordant, discordant or tied, each metric at its own tie threshold) "
    "with probability ½ rather than their scores",
}


def methods_paragraph(
    table: MetaEvalTable,
    ranking: Ranking | None,
    *,
    dimension: str = "meaning",
    configs: dict[str, tuple[str, dict[str, Any]]] | None = None,
) -> str:
    """The methods a paper needs, in short paragraphs separated by a blank line: the data
    and measures, each metric's configuration, the measures' rules, the ranking."""
    measures = list(dict.fromkeys(v.measure for v in table.values))
    paragraphs = [_data_paragraph(table, measures, dimension)]
    if configs:
        paragraphs.append(configurations_paragraph(configs))
    paragraphs.extend(_measure_paragraphs(table, measures))
    if table.by:
        paragraphs.append(
            f"Every measure is also reported per {table.by}, on that category's outputs."
        )
    if ranking is not None:
        paragraphs.append(_ranking_paragraph(ranking))
    return "\n\n".join(paragraphs)


def _data_paragraph(table: MetaEvalTable, measures: list[str], dimension: str) -> str:
    metrics = list(dict.fromkeys(v.metric for v in table.values))
    left_out = (
        f" ({counted(table.n_left_out, 'output')} without a score of every metric left out)"
        if table.n_left_out
        else ""
    )
    return (
        f"We compare {counted(len(metrics), 'metric')} with the human {dimension} ratings of "
        f"{counted(table.n_outputs, 'output')} scored by every metric{left_out}. Measures: "
        + "; ".join(MEASURE_TITLES[m] for m in measures)
        + f". Correlations and pairwise measures use the grouping {grouping_text(table.group_by)}; "
        "SPA is always system-level and the tau-like always compares outputs of one source."
    )


def grouping_text(group_by: str) -> str:
    """A grouping's one name with what it means: 'all outputs together' (one value …)."""
    return f"“{GROUPING_NAMES[group_by]}” ({GROUPING_WORDS[group_by]})"


def option_text(key: str, value: Any) -> str:
    """One option of a metric's configuration, as a methods section says it."""
    if key == "reference_mode":
        return f"references: {REFERENCE_WORDS.get(str(value), str(value))}"
    if key == "layer" and value is None:
        return "layer: the model's default"
    if isinstance(value, bool):
        value = "yes" if value else "no"
    return f"{OPTION_WORDS.get(key, key.replace('_', ' '))}: {value}"


def configurations_paragraph(configs: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """Each metric with its configuration: references, model, layer, idf and the rest."""
    first = [k for k in OPTION_WORDS]
    parts = []
    for name, (metric, config) in configs.items():
        keys = [k for k in first if k in config] + sorted(k for k in config if k not in first)
        shown = ", ".join(
            option_text(k, config[k]) for k in keys if config[k] is not None or k == "layer"
        )
        parts.append(f"{name} ({metric}; {shown})" if shown else f"{name} ({metric})")
    return "Metric configurations: " + "; ".join(parts) + "."


def _measure_paragraphs(table: MetaEvalTable, measures: list[str]) -> list[str]:
    parts = []
    if "acc_eq_star" in measures:
        parts.append(
            "acc*_eq uses one tie threshold ε for a metric: the one that maximises acc_eq, "
            "searched over 0 and every distinct absolute metric difference of a compared "
            "pair (the smallest best ε is reported)."
        )
    if "spa" in measures:
        parts.append(
            "SPA is 1 minus the mean absolute difference between the human and the metric "
            "p-values of one-sided paired permutation tests over sources, for every pair of "
            "systems, on the sources every system has an output of (1,000 permutations)."
        )
    if "tau_like" in measures:
        within = f" that share their {table.pairs_within}" if table.pairs_within else ""
        parts.append(
            f"The tau-like compares two outputs of one source{within}: every rater who "
            f"rated both votes for one of them, or a tie when their ratings differ by at "
            f"most {table.tie_threshold:g} points; a pair counts when a strict majority of "
            "its raters vote for the same output, and is concordant when the metric scores "
            "that output higher, otherwise (a metric tie included) discordant; "
            "τ = (C − D) / (C + D)."
        )
    return parts


def _ranking_paragraph(ranking: Ranking) -> str:
    resampled = (
        ""
        if ranking.test == "williams"
        else f", {ranking.resamples:,} resamples, seed {ranking.seed}"
    )
    again = (
        "; each metric keeps the ε calibrated on all its pairs"
        if ranking.test == "pairs"
        else "; acc*_eq searches its ε again on every resample (as MTME's permutation "
        "test does with its tie-optimised Kendall)"
        if ranking.measure == "acc_eq_star"
        else "; SPA is recomputed on each resample with its own source flips and the "
        "human p-values fixed"
        if ranking.measure == "spa"
        else ""
    )
    on_what = "" if ranking.test == "pairs" else ", on scores standardised per metric"
    stop = ranking.early_stop
    early = (
        f" Resampling stops early for a pair of metrics, as in MTME, at the end of a block "
        f"of {stop.block} draws"
        + (" whose last draw reached the observed difference" if ranking.test == "pairs" else "")
        + f", when the p-value is below {stop.low:g} or above {stop.high:g}."
        if stop is not None
        else ""
    )
    intervals = (
        f" Intervals are 95% percentile intervals of {ranking.resamples:,} BOOT-BOTH resamples."
        if ranking.intervals
        else ""
    )
    return (
        f"Metrics are ranked by {MEASURE_TITLES[ranking.measure]}, "
        f"{GROUPING_NAMES[ranking.group_by]}, over {ranking.over}. Each pair of metrics is "
        f"compared with {TEST_WORDS[ranking.test]}{resampled}, one-sided"
        f"{on_what}{again}.{early} Metrics are grouped into significance clusters at "
        f"α = {ranking.alpha:g}: in order of the measure, a metric opens a new cluster "
        "when a metric of the current cluster is significantly better than it (the rule "
        "of the WMT metrics tasks' MTME tool), so no member of a cluster is "
        "significantly worse than a better member of the same cluster; a cluster is not "
        f"significantly below every metric of the cluster above.{intervals}"
    )


def attach_ranking(table: MetaEvalTable, ranking: Ranking | None) -> None:
    """Copy the ranking's clusters and intervals onto the table's overall values."""
    if ranking is None:
        return
    for v in table.values:
        if v.category == "" and v.measure == ranking.measure:
            v.cluster = ranking.clusters.get(v.metric)
            v.interval = ranking.intervals.get(v.metric)


def overview_frame(table: MetaEvalTable, category: str = "") -> pd.DataFrame:
    """Metrics × measures, one category; "not defined" where a value is."""
    rows: dict[str, dict[str, Any]] = {}
    for v in table.values:
        if v.category != category:
            continue
        cell: Any = round(v.value, 4) if v.value is not None else "not defined"
        if v.measure == "acc_eq_star" and v.value is not None:
            cell = f"{v.value:.4f} (ε {v.details.get('epsilon', 0):.3g})"
        rows.setdefault(v.metric, {})[v.measure] = cell
    return pd.DataFrame.from_dict(rows, orient="index")


def to_json(
    table: MetaEvalTable, ranking: Ranking | None, methods: str, settings: dict[str, Any]
) -> dict[str, Any]:
    return {
        "settings": settings,
        "n_outputs": table.n_outputs,
        "n_left_out": table.n_left_out,
        "values": [v.to_dict() for v in table.values],
        "ranking": ranking.to_dict() if ranking is not None else None,
        "methods": methods,
    }
