"""The report's "Which metric" section: the cluster ranking, per-category values, the
p-value matrix and the methods paragraph, as HTML."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import pandas as pd

from meaningbench.analysis.metaeval import MetaEvalTable
from meaningbench.analysis.metaeval_significance import Ranking
from meaningbench.analysis.metaeval_text import MEASURE_TITLES, methods_paragraph, overview_frame
from meaningbench.analysis.svg import bar_chart


def which_metric_section(
    table: MetaEvalTable | None,
    ranking: Ranking | None,
    *,
    dimension: str,
    render_table: Callable[[pd.DataFrame], str],  # the report's html_table
    note: str | None = None,
) -> str:
    head = "<h2 id='which-metric'>Which metric</h2>"
    if table is None:
        return head + f"<p>{escape(note or 'No metric scores or no ratings.')}</p>"
    parts = [head]
    if ranking is not None and ranking.order:
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
        parts.append(
            f"<p class='note'>Ranked by {escape(MEASURE_TITLES[ranking.measure])} "
            f"({escape(ranking.group_by)} level). Metrics in one cluster are not significantly "
            f"different at α = {ranking.alpha:g} ({escape(ranking.test)}, "
            f"{ranking.resamples:,} resamples, seed {ranking.seed}).</p>"
        )
        parts.append(render_table(frame))
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
        for m, why in ranking.reasons.items():
            parts.append(f"<p class='note'>{escape(m)}: {escape(why)}</p>")
    parts.append("<h3>All measures</h3>")
    parts.append(render_table(overview_frame(table)))
    reasons = sorted({(v.measure, v.reason) for v in table.values if v.reason and not v.category})
    parts.extend(f"<p class='note'>{escape(m)}: {escape(r)}</p>" for m, r in reasons)
    cats = sorted({v.category for v in table.values if v.category})
    if cats and table.by:
        parts.append(f"<h3>Per {escape(table.by)}</h3>")
        for c in cats:
            parts.append(f"<h4>{escape(table.by)} = {escape(c)}</h4>")
            parts.append(render_table(overview_frame(table, c)))
    if ranking is not None and 1 < len(ranking.order) <= 30:
        parts.append(
            "<h3>p-values</h3><p class='note'>One-sided p that the row metric is better "
            "than the column metric.</p>"
        )
        parts.append(render_table(ranking.p_values.loc[ranking.order, ranking.order]))
    parts.append("<h3>Methods</h3>")
    parts.append(
        f"<p class='methods'>{escape(methods_paragraph(table, ranking, dimension=dimension))}</p>"
    )
    return "".join(parts)
