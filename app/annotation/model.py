"""Value objects the annotation session hands to a screen (or a script, or a test)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from meaningbench.annotation.proposals import ProposalFate, ProposedSpan
from meaningbench.annotation.spans import Span


@dataclass(frozen=True)
class Scale:
    """An active rating dimension as a rater meets it."""

    id: int
    name: str
    scale: str  # continuous | likert
    min_value: float
    max_value: float
    label_low: str
    label_high: str
    question: str
    # Likert: the label of each point, lowest first (empty: numbers only).
    point_labels: tuple[str, ...] = ()

    @property
    def is_likert(self) -> bool:
        return self.scale == "likert"


@dataclass(frozen=True)
class ShownItem:
    """One pair on screen. It says nothing of the item's kind: controls look like any item."""

    item_id: int
    source: str
    output: str
    # This annotator's current ratings of the item, by dimension name; empty when unrated.
    values: dict[str, float] = field(default_factory=dict)
    flagged: bool = False
    comment: str | None = None
    # True when shown to revise an earlier rating (moved back to it), not as the next item.
    reviewing: bool = False
    shown_at: datetime | None = None
    # Error span annotation: the spans of this annotator's current rating of the item.
    spans: tuple[Span, ...] = ()
    # Pre-filled error spans: on an unrated item the judge's proposals to show; on a rated
    # one what became of the proposals its rater saw (kept and edited ones are among `spans`).
    proposals: tuple[ProposedSpan, ...] = ()
    fates: tuple[ProposalFate, ...] = ()

    @property
    def rated(self) -> bool:
        return bool(self.values)


@dataclass(frozen=True)
class Progress:
    rated: int
    total: int
    skipped: int  # unrated items that were skipped at least once (they come back)

    @property
    def left(self) -> int:
        return self.total - self.rated

    @property
    def fraction(self) -> float:
        return self.rated / self.total if self.total else 1.0


@dataclass(frozen=True)
class ItemGiven:
    """What a rater gave for one item in one submission: the values by dimension, where
    the scales started, and (esa) the spans with the fates of the proposals shown."""

    item_id: int
    values: dict[str, float]
    start_values: dict[str, float | None] = field(default_factory=dict)
    shown_at: datetime | None = None
    spans: tuple[Span, ...] = ()
    display: dict[str, object] | None = None  # where a side-by-side output stood
    proposals: tuple[ProposalFate, ...] = ()


@dataclass(frozen=True)
class Submission:
    item_id: int
    rating_ids: tuple[int, ...]
    revised: bool  # an earlier rating of the item was superseded
    submitted_at: datetime
    duration_ms: int | None
