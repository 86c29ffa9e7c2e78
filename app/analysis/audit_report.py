"""The audit as an HTML section of the report (`meaningbench.analysis.report`), and its
group rows as the report and the terminal (`meaningbench audit`) both print them."""

from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd

from meaningbench.analysis.audit import AuditResult
from meaningbench.analysis.html_table import html_table

# How the report and the terminal write a group row's numbers; the other columns are text.
_CELLS = {
    "labels": "{:,.0f}",
    "MAD": "{:.2f}",
    "Pearson": "{:.3f}",
    "ambiguous": "{:,.0f}",
    "other pair": "{:,.0f}",
}


def group_rows(result: AuditResult) -> pd.DataFrame:
    """The audit's group rows as text, cell for cell what the report and `meaningbench
    audit` print: `AuditResult.group_frame` with its numbers written out ("–" for none)."""
    frame = result.group_frame().astype(object)
    for column, pattern in _CELLS.items():
        frame[column] = [pattern.format(v) if pd.notna(v) else "–" for v in frame[column]]
    return frame


def audit_section(result: AuditResult | None, label_sets: list[str] | None = None) -> str:
    """Published labels against raw ratings: the table, the diagnoses, the worst mismatches."""
    if result is None:
        return ""
    parts = [
        "<h2>Published labels against raw ratings</h2>",
        "<p class='note'>Every aggregate label compared with the mean of the raw ratings of the "
        f"same pair (matched on normalised source + output + dimension: "
        f"{escape(result.normalisation)}). Equal: within {result.tolerance:g} on 0–100. "
        "Other pair: the label misses its own pair's mean but equals another pair's.</p>",
    ]
    if label_sets is not None:
        used = ", ".join(label_sets) or "none"
        parts.append(f"<p class='note'>Label set used by this report: <b>{escape(used)}</b>.</p>")
    if result.groups:
        parts.append(html_table(group_rows(result)))
    unmatched = [f"{escape(k)}: {v:,}" for k, v in sorted(result.unmatched.items()) if v]
    if unmatched:
        parts.append(
            "<p class='note'>Labels without raw ratings of the same pair in the study: "
            + "; ".join(unmatched)
            + ".</p>"
        )
    diagnoses = [
        f"<li>{escape(g.label_set)} vs {escape(g.source)}: {escape(g.mapping_text() or '')}</li>"
        for g in result.groups
        if g.mapping
    ]
    if diagnoses:
        parts.append(f"<ul>{''.join(diagnoses)}</ul>")
    parts += [f"<p class='note'>{escape(n)}</p>" for n in result.notes]
    table = result.labels
    if not table.empty:
        absdiff = pd.to_numeric(table["diff"], errors="coerce").abs()
        top = table.assign(absdiff=absdiff).dropna(subset=["absdiff"])
        top = top.sort_values("absdiff", ascending=False).head(10)
        if len(top) and float(np.nanmax(top["absdiff"])) > result.tolerance:
            worst = pd.DataFrame(
                {
                    "source file": top["source_file"].to_numpy(),
                    "label": top["label"].to_numpy(dtype=float),
                    "raw mean": top["raw_mean"].to_numpy(dtype=float),
                    "n ratings": top["n_ratings"].to_numpy(dtype=float).astype(int),
                },
                index=[str(o)[:80] for o in top["output"]],
            )
            worst.index.name = "output (worst mismatches)"
            parts.append(html_table(worst, digits=2))
    return "".join(parts)
