"""The rater's own progress in words: where they are in their queue, the time they have
spent rating, and what the end screen says once every entry is rated.

Every entry of the queue counts as one, whatever it is: a hidden control is an item like
any other, so no figure here can tell a rater which of their items are controls. The time
spent is `annotation.time_spent.rating_time`: the recorded time on screen of each
submission, added up (the time between items is not in it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from meaningbench.annotation.model import Progress

__all__ = [
    "SPENT_TIP",
    "Standing",
    "counter_text",
    "end_summary",
    "spent_text",
]

SPENT_TIP = (
    "Time spent: how long each item you rated was on screen before you submitted it, "
    "added up. Time between items (skips, pauses with no item open) is not counted."
)


@dataclass(frozen=True)
class Standing:
    """What the screen shows of a rater's queue: its counts, how many entries are on screen
    now (0: none, the end screen), whether they are revising, and the time spent."""

    progress: Progress
    on_screen: int
    reviewing: bool
    spent: timedelta


def spent_text(spent: timedelta) -> str:
    """A duration as a rater reads it: "under 1 min", "12 min", "1 h 05 min"."""
    minutes = int(spent.total_seconds() // 60)
    if minutes < 1:
        return "under 1 min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


def counter_text(standing: Standing, noun: str = "Item", nouns: str = "Items") -> str:
    """The header's counter: "Item 37 of 119 · 1 skipped · 12 min spent".

    The entry on screen is the next one to rate after those rated, so a skip does not move
    the number on (the skipped entry comes back at the end, and the skipped count says so);
    revising a rated entry shows the rated count instead.
    """
    p = standing.progress
    if standing.on_screen == 0:
        where = f"{p.rated} of {p.total} rated"
    elif standing.reviewing:
        where = f"Revising · {p.rated} of {p.total} rated"
    else:
        first = min(p.rated + 1, p.total)
        last = min(p.rated + standing.on_screen, p.total)
        where = (
            f"{noun} {first} of {p.total}"
            if last == first
            else f"{nouns} {first}–{last} of {p.total}"
        )
    parts = [where]
    if p.skipped and standing.on_screen:
        parts.append(f"{p.skipped} skipped")
    parts.append(f"{spent_text(standing.spent)} spent")
    return " · ".join(parts)


def end_summary(standing: Standing, nouns: str = "items") -> str:
    """The end screen's first line: what was done, in how much time."""
    p = standing.progress
    return (
        f"You rated every one of the {p.total} {nouns} in your queue, in "
        f"{spent_text(standing.spent)} of rating time."
    )
