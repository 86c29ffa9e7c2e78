"""The report's "Which metric" section: the cluster ranking, per-category values, the
p-value matrix, the stopping signal and the methods, as HTML."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

import pandas as pd

from meaningbench.analysis.html_table import html_table
from meaningbench.analysis.metaeval import GROUPING_NAMES, MetaEvalTable
from meaningbench.analysis.metaeval_significance import CLUSTER_MEANING, Ranking
from meaningbench.analysis.metaeval_stability import Stability
from meaningbench.analysis.metaeval_text import (
    MEASURE_TITLES,
    grouping_text,
    methods_paragraph,
    overview_frame,
)
from meaningbench.analysis.svg import bar_chart


@dataclass(frozen=True)
class CorrelationView:
    """What the report's correlation table holds: Pearson over every rated item (all
    outputs together), on raw means or on z-scores."""

    pearson: dict[str, float]
    z: bool


def which_metric_section(
    table: MetaEvalTable | None,
    ranking: Ranking | None,
    *,
    dimension: str,
    note: str | None = None,
    configs: dict[str, tuple[str, dict[str, Any]]] | None = None,
    stopping: Stability | None = None,
    correlations: CorrelationView | None = None,
) -> str:
    head = "<h2 id='which-metric'>Which metric</h2>"
    if table is None:
        return head + f"<p>{escape(note or 'No metric scores or no ratings.')}</p>"
    parts = [head]
    if ranking is not None and ranking.order:
        parts.extend(_ranking_parts(ranking))
        differ = grouping_note(ranking, correlations)
        if differ:
            parts.append(f"<p class='note'>{escape(differ)}</p>")
    if stopping is not None:
        parts.append(_stopping_part(stopping))
    parts.append("<h3>All measures</h3>")
    parts.append(html_table(overview_frame(table)))
    reasons = sorted({(v.measure, v.reason) for v in table.values if v.reason and not v.category})
    parts.extend(f"<p class='note'>{escape(m)}: {escape(r)}</p>" for m, r in reasons)
    cats = sorted({v.category for v in table.values if v.category})
    if cats and table.by:
        parts.append(f"<h3>Per {escape(table.by)}</h3>")
        for c in cats:
            parts.append(f"<h4>{escape(table.by)} = {escape(c)}</h4>")
            parts.append(html_table(overview_frame(table, c)))
    if ranking is not None and 1 < len(ranking.order) <= 30:
        parts.append(_p_value_part(ranking))
    parts.append("<h3>Methods</h3>")
    methods = methods_paragraph(table, ranking, dimension=dimension, configs=configs)
    parts.extend(f"<p class='methods'>{escape(p)}</p>" for p in methods.split("\n\n"))
    return "".join(parts)


def _ranking_parts(ranking: Ranking) -> list[str]:
    rows = []
    for m in ranking.order:
        lo_hi = ranking.intervals.get(m)
        rows.append(
            {
                "metric": m,
                "cluster": str(ranking.clusters[m]),
                "value": ranking.values[m],
                "95% low": lo_hi[0] if lo_hi else None,
                "95% high": lo_hi[1] if lo_hi else None,
            }
        )
    frame = pd.DataFrame(rows).set_index("metric")
    parts = [
        f"<p class='note'>Ranked by {escape(MEASURE_TITLES[ranking.measure])}, "
        f"{escape(GROUPING_NAMES[ranking.group_by])}, over {escape(ranking.over)} "
        f"({escape(ranking.test)}, {ranking.resamples:,} resamples, seed {ranking.seed}, "
        f"α = {ranking.alpha:g}). {escape(CLUSTER_MEANING)}</p>"
    ]
    if ranking.warning:
        parts.append(f"<p class='note fail'>Warning: {escape(ranking.warning)}</p>")
    parts.append(html_table(frame))
    lows = [ranking.intervals.get(m, (float("nan"),) * 2)[0] for m in ranking.order]
    highs = [ranking.intervals.get(m, (float("nan"),) * 2)[1] for m in ranking.order]
    parts.append(
        bar_chart(
            [f"{ranking.clusters[m]} · {m}" for m in ranking.order],
            [float(ranking.values[m] or 0.0) for m in ranking.order],
            lows,
            highs,
            title=f"{ranking.measure} by cluster, with 95% interval",
        )
    )
    parts.extend(
        f"<p class='note'>{escape(m)}: {escape(why)}</p>" for m, why in ranking.reasons.items()
    )
    return parts


def grouping_note(ranking: Ranking, correlations: CorrelationView | None) -> str | None:
    """Why the correlation table's Pearson and this ranking's differ, when they do: the
    correlation table puts all outputs together (on z-scores with --z)."""
    if correlations is None or ranking.measure != "pearson":
        return None
    causes = []
    if ranking.group_by != "none":
        causes.append(f"this ranking uses the grouping {grouping_text(ranking.group_by)}")
    if correlations.z:
        causes.append("the correlation table correlates per-rater z-scores, this one raw means")
    if not causes:
        return None
    shown = next((m for m in ranking.order if m in correlations.pearson), None)
    example = ""
    if shown is not None and ranking.values.get(shown) is not None:
        example = (
            f" ({shown}: {correlations.pearson[shown]:.3f} there, "
            f"{float(ranking.values[shown] or 0.0):.3f} here)"
        )
    return (
        "The correlation table above correlates all outputs together; "
        + "; ".join(causes)
        + f", so their Pearson values differ{example}. Both are right for what they measure."
    )


def _stopping_part(stopping: Stability) -> str:
    return (
        "<h3>Is it time to stop rating?</h3>"
        f"<p><b>{escape(stopping.verdict().capitalize())}.</b> {escape(stopping.sentence())} "
        f"{escape(stopping.trend_sentence())}</p>"
    )


def _p_value_part(ranking: Ranking) -> str:
    p = ranking.p_values.loc[ranking.order, ranking.order]
    shown = p.map(lambda v: ranking.p_text(float(v)) if pd.notna(v) else "–")
    floor = "" if ranking.test == "williams" else f" (1 / {ranking.resamples:,} resamples)"
    return (
        "<h3>p-values</h3><p class='note'>One-sided p that the row metric is better "
        f"than the column metric; below what the test can tell{floor} reads “&lt; …”.</p>"
        + html_table(shown)
    )
