"""What the Campaign page reads: the figures of `meaningbench campaign`, and their text.

The figures are the kits layer's own (`meaningbench.kits.campaign`), computed once for the
command line and the page alike; this module only puts them into the page's words: a
rater's row of cells, the items' count of ratings in, the items a filter keeps.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

from meaningbench.core.wording import counted
from meaningbench.kits.campaign import Campaign, RaterProgress, campaign
from meaningbench.kits.coverage import ItemCoverage
from meaningbench.queries.files import open_study
from meaningbench.runtime import Job, JobContext

# The page draws these; the command line's `--json` is `Campaign.to_json()`.
__all__ = [
    "RATER_COLUMNS",
    "Campaign",
    "ITEM_FILTERS",
    "ItemCoverage",
    "RaterProgress",
    "campaign_job",
    "coverage_summary",
    "filter_text",
    "has_kits",
    "items_shown",
    "practice_cell",
    "rater_cells",
    "when",
]

NO_VALUE = "–"
# Two-line headings keep the table within a 1024-pixel window.
RATER_COLUMNS = (
    "Rater",
    "Kits\nsent",
    "Kits\nreturned",
    "Items done\nof assigned",
    "Identical\npassed",
    "Unrelated\npassed",
    "r with\nothers",
    "Seconds\nper item",
    "Last return",
    "Practice",
)
# What the items' filter offers: its key and words.
ITEM_FILTERS = (("short", "Short of k"), ("all", "All items"), ("complete", "Complete"))


def campaign_job(study_path: Path, dimension: str | None = None) -> Job[Campaign]:
    """The campaign's figures, as `meaningbench campaign STUDY --json` gives them, read in
    the background (the rater checks take a while on a large study) from the study file
    the job opens itself."""

    def run(_ctx: JobContext) -> Campaign:
        study = open_study(study_path, allow_read_only=True)
        try:
            return campaign(study, dimension)
        finally:
            study.close()

    return run


def has_kits(figures: Campaign) -> bool:
    return any(r.kits_sent for r in figures.raters)


def _number(x: float, spec: str) -> str:
    return NO_VALUE if not math.isfinite(x) else format(x, spec)


def when(stamp: str | None) -> str:
    """A stored UTC time as the lead's clock shows it, to the minute."""
    if not stamp:
        return NO_VALUE
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def rater_cells(r: RaterProgress) -> tuple[str, ...]:
    """A rater's row, in `RATER_COLUMNS` order."""
    share = f" ({r.done / r.assigned:.0%})" if r.assigned else ""
    return (
        r.rater,
        str(r.kits_sent),
        str(r.kits_returned),
        f"{r.done} / {r.assigned}{share}",
        _number(r.identical_pass, ".0%"),
        _number(r.unrelated_pass, ".0%"),
        _number(r.agreement_r, ".2f"),
        _number(r.median_seconds, ".1f"),
        when(r.last_return),
        practice_cell(r),
    )


def practice_cell(r: RaterProgress) -> str:
    """`passed · 1/3, 3/3`: the verdict, then per attempt the items within the pass mark."""
    if not r.practice_verdict:
        return NO_VALUE
    counts = ", ".join(f"{n}/{r.practice_items}" for n in r.practice_attempts)
    return f"{r.practice_verdict} · {counts}" if counts else r.practice_verdict


def coverage_summary(figures: Campaign) -> str:
    """`k = 2: 40 items complete, 15 have 1, 5 have 0` (most ratings first)."""
    if not figures.items:
        return f"k = {figures.k}: no items in the raters' queues yet"
    parts = []
    for n, count in sorted(figures.counts().items(), reverse=True):
        if n >= figures.k:
            label = f"complete ({counted(n, 'rating')})" if n > figures.k else "complete"
            parts.append(f"{counted(count, 'item')} {label}")
        else:
            parts.append(f"{count} {'has' if count == 1 else 'have'} {n}")
    return f"k = {figures.k}: " + ", ".join(parts)


def filter_text(figures: Campaign, which: str) -> str:
    """A filter's words with the number of items it keeps: `Short of k (21)`."""
    words = dict(ITEM_FILTERS)[which]
    return f"{words} ({len(items_shown(figures, which))})"


def items_shown(figures: Campaign, which: str) -> list[ItemCoverage]:
    """The items a filter of `ITEM_FILTERS` keeps, fewest ratings first for the short ones."""
    if which == "short":
        return sorted(figures.short, key=lambda c: (c.ratings, c.item_id))
    if which == "complete":
        return [c for c in figures.items if c.ratings >= figures.k]
    return list(figures.items)
