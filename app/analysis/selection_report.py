"""The report's "Rating fewer items" section: the selection strategies replayed on the
study's ratings (`meaningbench.analysis.selection_sim`), as HTML with the plot."""

from __future__ import annotations

from html import escape

import pandas as pd

from meaningbench.analysis.html_table import html_table
from meaningbench.analysis.metaeval_choices import GROUPING_NAMES
from meaningbench.analysis.selection_sim import Simulation, plot_svg


def selection_section(sim: Simulation | None) -> str:
    if sim is None:
        return ""
    rows = [
        {
            "strategy": s.strategy,
            "settled share (%)": s.mean,
            "SD": s.sd,
            "min": s.low,
            "max": s.high,
            "of random's": s.of_random,
            "τ alone (%)": s.tau_only_mean,
        }
        for s in sim.summaries()
    ]
    frame = pd.DataFrame(rows).set_index("strategy")
    seeds = len(next(iter(sim.curves.values())))
    top = ", ".join(sorted(m for m, c in sim.reference.clusters.items() if c == 1))
    note = (
        f"The study's {sim.n_ratings:,} ratings of {sim.n_items:,} items replayed in each "
        f"strategy's order ({seeds} seeds). After every step of the budget the metrics are "
        f"ranked by {sim.measure} ({GROUPING_NAMES.get(sim.group_by, sim.group_by)}, clusters by {sim.test} with "
        f"{sim.resamples} resamples); the settled share is the budget from which on Kendall's "
        f"τ with the full-data ranking stays ≥ {sim.tau_goal:g} and the top cluster "
        f"({top}) stays the same. Strategies use only the stored metric scores (balanced: "
        "the items' systems)."
    )
    note += "".join(f" {n[0].upper()}{n[1:]}." for n in sim.notes)
    return (
        "<h2 id='rating-fewer-items'>Rating fewer items</h2>"
        f"<p class='note'>{escape(note)}</p>"
        + html_table(frame)
        + f"<div class='charts'>{plot_svg(sim)}</div>"
    )
