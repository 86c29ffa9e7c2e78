"""The report's "Which metric" section: the cluster ranking, per-category values, the
p-value matrix, the stopping signal and the methods, as HTML."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

import pandas as pd

from meaningbench.analysis.html_table import html_table
from meaningbench.analysis.metaeval import MetaEvalTable
from meaningbench.analysis.metaeval_choices import GROUPING_NAMES
from meaningbench.analysis.metaeval_humans import GAP_WORDS, HumanBaseline, row_order
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
    humans: HumanBaseline | None = None,
) -> str:
    """`humans`: the human rows of the ranking's measure and grouping (each rater against
    the others, the one-rater baseline), shown in the ranking as marked rows."""
    head = "<h2 id='which-metric'>Which metric</h2>"
    if table is None:
        return head + f"<p>{escape(note or 'No metric scores or no ratings.')}</p>"
    parts = [head]
    if ranking is not None and ranking.order:
        parts.extend(_ranking_parts(ranking, humans))
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


def _ranking_rows(
    ranking: Ranking, humans: HumanBaseline | None
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The metrics best first with each one's distance from the one-rater baseline, the
    human rows with a value placed as the tab places them (`row_order`); the classes that
    mark the human rows."""
    rows: list[dict[str, Any]] = []
    gaps = humans is not None and humans.one_rater is not None
    for m in ranking.order:
        lo_hi = ranking.intervals.get(m)
        row: dict[str, Any] = {
            "metric": m,
            "cluster": str(ranking.clusters[m]),
            "kind": "metric",
            "value": ranking.values[m],
            "95% low": lo_hi[0] if lo_hi else None,
            "95% high": lo_hi[1] if lo_hi else None,
        }
        if gaps and humans is not None:
            row["Δ one rater"] = humans.gap(ranking.values[m])
        rows.append(row)
    classes: dict[str, str] = {}
    for h in humans.rows if humans is not None else []:
        if h.value is None:
            continue
        rows.append({"metric": h.label, "cluster": "human", "kind": "human", "value": h.value})
        classes[h.label] = "human"
    rows.sort(key=lambda r: row_order(r["kind"], r["metric"], float(r["value"] or 0.0)))
    frame = pd.DataFrame(rows).set_index("metric").drop(columns="kind")
    return frame, classes


def _human_notes(humans: HumanBaseline | None) -> list[str]:
    """Why there is no human row, or which rater has none; what Δ one rater means."""
    if humans is None:
        return []
    if humans.reason:
        return [f"<p class='note'>{escape(humans.reason[:1].upper() + humans.reason[1:])}.</p>"]
    notes = [
        f"<p class='note'>{escape(h.label)}: {escape(h.reason)}</p>"
        for h in humans.rows
        if h.value is None and h.reason
    ]
    notes.append(
        "<p class='note'>Rows in italics are human raters, each measured against the other "
        f"raters only (Proietti et al., 2025). {escape(GAP_WORDS)}.</p>"
    )
    return notes


def _ranking_parts(ranking: Ranking, humans: HumanBaseline | None = None) -> list[str]:
    frame, classes = _ranking_rows(ranking, humans)
    parts = [
        f"<p class='note'>Ranked by {escape(MEASURE_TITLES[ranking.measure])}, "
        f"{escape(GROUPING_NAMES[ranking.group_by])}, over {escape(ranking.over)} "
        f"({escape(ranking.test)}, {ranking.resamples:,} resamples, seed {ranking.seed}, "
        f"α = {ranking.alpha:g}). {escape(CLUSTER_MEANING)}</p>"
    ]
    if ranking.warning:
        parts.append(f"<p class='note fail'>Warning: {escape(ranking.warning)}</p>")
    parts.append(html_table(frame, classes=classes))
    parts.extend(_human_notes(humans))
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
