"""Disagreements between human raters: the items a lead should look at again.

Two raters' ratings of one item and dimension differ by a gap (each rater's ratings of the
item averaged first, as in `meaningbench.analysis.human`; every anonymous rating is a rater
of its own). An item's gap is its largest pairwise gap. The items whose gap is more than a
threshold are listed, largest first; by default the threshold is the study's own 95th
percentile of every pairwise gap on that dimension, so about the widest 5% of pairs show.

Machine raters (the judge) and label sets are no raters here. The lead settles an item
through `meaningbench.analysis.resolutions`; its decision is shown beside the ratings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.analysis.data import dimension_info
from meaningbench.analysis.resolutions import (
    DEFAULT_SET,
    HUMAN_KINDS,
    Resolution,
    current_resolutions,
)
from meaningbench.db.frames import ratings_frame
from meaningbench.db.models import Item, RatingSpan
from meaningbench.errors import UserError

PERCENTILE = 95.0


@dataclass(frozen=True)
class MarkedSpan:
    side: str
    start: int
    end: int
    severity: str
    text: str


@dataclass(frozen=True)
class RaterRating:
    rater: str
    value: float  # the rater's mean rating of the item
    n_ratings: int
    spans: list[MarkedSpan] = field(default_factory=list)


@dataclass(frozen=True)
class Disagreement:
    item_id: int
    source: str
    output: str
    system: str | None
    gap: float  # the largest gap between two raters' ratings of the item
    ratings: list[RaterRating]
    resolution: Resolution | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "item_id": self.item_id,
            "source": self.source,
            "output": self.output,
            "system": self.system,
            "gap": self.gap,
            "ratings": [
                {
                    "rater": r.rater,
                    "value": r.value,
                    "n_ratings": r.n_ratings,
                    "spans": [s.__dict__ for s in r.spans],
                }
                for r in self.ratings
            ],
            "resolution": self.resolution.to_json() if self.resolution else None,
        }


@dataclass(frozen=True)
class DisagreementReport:
    dimension: str
    threshold: float
    from_percentile: bool  # the threshold is the study's 95th percentile (not given)
    n_pairs: int  # pairs of raters on one item, over the study
    n_items_compared: int  # items with two human raters or more
    label_set: str
    items: list[Disagreement]
    scale: tuple[float, float] = (0.0, 100.0)  # the dimension's lowest and highest rating

    @property
    def n_resolved(self) -> int:
        return sum(d.resolution is not None for d in self.items)

    def describe_threshold(self) -> str:
        """The threshold and where it comes from, in words."""
        basis = (
            f"{self.n_pairs:,} pairwise gaps between two raters on {self.n_items_compared:,} items"
        )
        if self.from_percentile:
            return f"{self.threshold:g}, the study's {PERCENTILE:g}th percentile of {basis}"
        return f"{self.threshold:g} (the threshold given; the study has {basis})"

    def to_json(self) -> dict[str, object]:
        return {
            "dimension": self.dimension,
            "threshold": self.threshold,
            "threshold_from": f"percentile {PERCENTILE:g}" if self.from_percentile else "given",
            "pairs": self.n_pairs,
            "items_compared": self.n_items_compared,
            "label_set": self.label_set,
            "resolved": self.n_resolved,
            "items": [d.to_json() for d in self.items],
        }


def _rater_units(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, rater): the rater's mean, its number of ratings, its rating ids."""
    unit = frame["annotator"].astype(str)
    anonymous = frame["annotator_kind"] == "anonymous"
    # Each anonymous rating is one unknown person's: a rater of its own, numbered per item.
    numbered = frame.loc[anonymous].groupby(["item_id", "annotator"]).cumcount() + 1
    unit.loc[anonymous] = unit.loc[anonymous] + " #" + numbered.astype(str)
    grouped = frame.assign(unit=unit).groupby(["item_id", "unit"], sort=True)
    return grouped.agg(
        value=("value", "mean"), n=("value", "size"), rating_ids=("rating_id", list)
    ).reset_index()


def _spans(session: Session, rating_ids: list[int]) -> dict[int, list[MarkedSpan]]:
    out: dict[int, list[MarkedSpan]] = {}
    if not rating_ids:
        return out
    rows = session.scalars(
        select(RatingSpan)
        .where(RatingSpan.rating_id.in_(rating_ids))
        .order_by(RatingSpan.rating_id, RatingSpan.start)
    )
    for s in rows:
        out.setdefault(s.rating_id, []).append(
            MarkedSpan(s.side, s.start, s.end, s.severity, s.text)
        )
    return out


def _gaps(units: pd.DataFrame) -> tuple[np.ndarray, dict[int, float]]:
    """Every pairwise gap, and each compared item's largest gap."""
    pairs: list[float] = []
    largest: dict[int, float] = {}
    for item_id, part in units.groupby("item_id", sort=False):
        values = part["value"].to_numpy(dtype=np.float64)
        if values.size < 2:
            continue
        pairs.extend(abs(a - b) for a, b in combinations(values, 2))
        largest[int(str(item_id))] = float(values.max() - values.min())
    return np.asarray(pairs, dtype=np.float64), largest


def find_disagreements(
    session: Session,
    dimension: str = "meaning",
    threshold: float | None = None,
    *,
    label_set: str = DEFAULT_SET,
) -> DisagreementReport:
    """The regular items whose human raters differ by more than `threshold` on `dimension`
    (None: the study's 95th percentile of pairwise gaps), largest gap first, each with its
    raters' ratings, their spans, and the decision of the resolution set `label_set`."""
    info = dimension_info(session, dimension)
    if threshold is not None and (not np.isfinite(threshold) or threshold < 0):
        raise UserError(f"a threshold is a gap of 0 or more, not {threshold:g}")
    frame = ratings_frame(
        session, dimension=dimension, annotator_kinds=HUMAN_KINDS, kinds=("regular",)
    )
    units = _rater_units(frame) if not frame.empty else pd.DataFrame()
    gaps, largest = _gaps(units) if not units.empty else (np.zeros(0), {})
    if not largest:
        raise UserError(
            f"no item has {dimension} ratings from two human raters, so raters cannot "
            "disagree yet (a machine rater such as the judge, and published labels, are "
            "not raters here)"
        )
    from_percentile = threshold is None
    cut = float(np.percentile(gaps, PERCENTILE)) if threshold is None else float(threshold)
    chosen = sorted((i for i, g in largest.items() if g > cut), key=lambda i: (-largest[i], i))
    resolutions = current_resolutions(session, dimension, label_set)
    listed = units[units["item_id"].isin(chosen)]
    spans = _spans(session, [int(r) for ids in listed["rating_ids"] for r in ids])
    items = {i.id: i for i in session.scalars(select(Item).where(Item.id.in_(chosen)))}
    out = []
    for item_id in chosen:
        part = listed[listed["item_id"] == item_id]
        ratings = [
            RaterRating(
                str(r.unit),
                float(r.value),
                int(r.n),
                [s for rid in r.rating_ids for s in spans.get(int(rid), [])],
            )
            for r in part.sort_values(["value", "unit"]).itertuples()
        ]
        item = items[item_id]
        out.append(
            Disagreement(
                item_id,
                item.source,
                item.output,
                item.system,
                largest[item_id],
                ratings,
                resolutions.get(item_id),
            )
        )
    return DisagreementReport(
        dimension,
        cut,
        from_percentile,
        int(gaps.size),
        len(largest),
        label_set,
        out,
        (info.min_value, info.max_value),
    )
