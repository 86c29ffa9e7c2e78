"""Words and tables for a meta-evaluation: the methods paragraph a user can paste into a
paper, and the plain-number JSON of every figure."""

from __future__ import annotations

from typing import Any

import pandas as pd

from meaningbench.analysis.metaeval import MetaEvalTable
from meaningbench.analysis.metaeval_significance import Ranking

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
    "none": "global level (one value over all outputs)",
    "item": "item level (one value per source over its outputs, averaged over sources)",
    "system": "system level (over the systems' mean scores)",
    "per-system": "per-system level (one value per system over its outputs, averaged)",
}
TEST_WORDS = {
    "perm-both": "the PERM-BOTH paired permutation test (Deutsch et al., 2021) in the variant "
    "of its reference code nlpstats, which swaps the two metrics' scores of whole systems "
    "and then of whole sources, so that an output is swapped when exactly one of its system "
    "and its source was (the WMT metrics tasks' MTME tool instead swaps each output on its "
    "own)",
    "perm-items": "a paired permutation test that swaps the two metrics' scores of whole sources",
    "perm-systems": "a paired permutation test that swaps the two metrics' scores of whole systems",
    "boot-both": "the BOOT-BOTH paired bootstrap test (Deutsch et al., 2021), which resamples "
    "systems and sources together (p-values by the shifted-null rule of Berg-Kirkpatrick "
    "et al., 2012)",
    "williams": "Williams' test of dependent correlations (Graham and Baldwin, 2014)",
}


def methods_paragraph(
    table: MetaEvalTable, ranking: Ranking | None, *, dimension: str = "meaning"
) -> str:
    measures = list(dict.fromkeys(v.measure for v in table.values))
    metrics = list(dict.fromkeys(v.metric for v in table.values))
    parts = [
        f"We compare {len(metrics)} metric{'s' if len(metrics) != 1 else ''} with the human "
        f"{dimension} ratings of {table.n_outputs:,} outputs scored by every metric"
        + (
            f" ({table.n_left_out:,} outputs without a score of every metric left out)"
            if table.n_left_out
            else ""
        )
        + ". Measures: "
        + "; ".join(MEASURE_TITLES[m] for m in measures)
        + f". Correlations and pairwise measures are computed at the "
        f"{GROUPING_WORDS[table.group_by]}; SPA is always system-level and the tau-like "
        "always compares outputs of one source."
    ]
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
    if table.by:
        parts.append(f"Every measure is also reported per {table.by}, on that category's outputs.")
    if ranking is not None:
        parts.append(
            f"Metrics are ranked by {MEASURE_TITLES[ranking.measure]} at the "
            f"{GROUPING_WORDS[ranking.group_by].split(' (')[0]}. Each pair of metrics is "
            f"compared with {TEST_WORDS[ranking.test]}"
            + (
                ""
                if ranking.test == "williams"
                else f", {ranking.resamples:,} resamples, seed {ranking.seed}"
            )
            + ", one-sided, on scores standardised per metric"
            + (
                "; acc*_eq searches its ε again on every resample (as MTME's permutation "
                "test does with its tie-optimised Kendall)"
                if ranking.measure == "acc_eq_star"
                else "; SPA is recomputed on each resample with its own source flips and the "
                "human p-values fixed"
                if ranking.measure == "spa"
                else ""
            )
            + ". Metrics are grouped into significance clusters at "
            f"α = {ranking.alpha:g}: in order of the measure, a metric opens a new cluster "
            "when a metric of the current cluster is significantly better than it (the rule "
            "of the WMT metrics tasks' MTME tool), so no member of a cluster is "
            "significantly worse than a better member of the same cluster."
            + (
                f" Intervals are 95% percentile intervals of {ranking.resamples:,} BOOT-BOTH "
                "resamples."
                if ranking.intervals
                else ""
            )
        )
    return " ".join(parts)


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
