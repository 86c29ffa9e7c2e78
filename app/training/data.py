"""The training targets: one human score per rated item, on the 0–100 scale.

A target is the mean of the item's current ratings on the chosen dimension (aggregate
annotators such as a dataset's published mean label count as ratings). With `z=True` each
annotator's ratings of regular items are standardized first (mean, sample SD; SD 0 → 1), the
item's target is its mean z, and that mean is re-expressed on the study's own scale as
`mean + z · SD` of all regular ratings, clipped to 0–100. Training on z directly would not
work with the augmentation, whose identical (100) and unrelated (0) pairs live on the rating
scale, nor with the battery, which reads the model's logit as a 0–100 score.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import UserError
from db.frames import items_frame, ratings_frame
from db.models import Dimension

TARGET_COLUMNS = ["item_id", "source", "output", "system", "source_group", "target", "n_ratings"]


@dataclass(frozen=True)
class TargetTable:
    """Rated regular items with their target; `frame` has TARGET_COLUMNS."""

    frame: pd.DataFrame
    dimension: str
    z_scores: bool
    n_ratings: int
    n_annotators: int

    @property
    def n_items(self) -> int:
        return len(self.frame)

    @property
    def n_groups(self) -> int:
        return int(self.frame["source_group"].nunique())

    def data_hash(self) -> str:
        """A hash of exactly what the model learns from: pairs, groups, targets, options."""
        rows = sorted(
            (str(g), str(s), str(o), round(float(t), 6))
            for g, s, o, t in zip(
                self.frame["source_group"],
                self.frame["source"],
                self.frame["output"],
                self.frame["target"],
                strict=True,
            )
        )
        payload = {"dimension": self.dimension, "z": self.z_scores, "rows": rows}
        canonical = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _dimension(session: Session, name: str) -> Dimension:
    dim = session.scalar(select(Dimension).where(Dimension.name == name))
    if dim is None:
        known = session.scalars(select(Dimension.name).order_by(Dimension.position)).all()
        raise UserError(
            f"the study has no dimension {name!r}; its dimensions: {', '.join(known) or 'none'}"
        )
    return dim


def per_annotator_z(ratings: pd.DataFrame) -> pd.Series:
    """Each rating's z-score within its annotator (sample SD; a constant rater gets SD 1)."""
    grouped = ratings.groupby("annotator")["value"]
    mean = grouped.transform("mean")
    sd = grouped.transform(lambda v: v.std(ddof=1) if len(v) > 1 else np.nan)
    sd = sd.where(sd > 0, 1.0).fillna(1.0)
    return (ratings["value"] - mean) / sd


def item_targets(ratings: pd.DataFrame, *, z: bool) -> pd.DataFrame:
    """Per item: the target on 0–100 and how many ratings it stands on.

    `ratings` has columns item_id, annotator and value (already on 0–100).
    """
    if not z:
        grouped = ratings.groupby("item_id")["value"]
        return pd.DataFrame({"target": grouped.mean(), "n_ratings": grouped.size()}).reset_index()
    zs = ratings.assign(z=per_annotator_z(ratings))
    grouped = zs.groupby("item_id")["z"]
    mean_raw = float(ratings["value"].mean())
    sd_raw = float(ratings["value"].std(ddof=1)) if len(ratings) > 1 else 0.0
    if not np.isfinite(sd_raw) or sd_raw <= 0:
        sd_raw = 1.0
    target = (mean_raw + sd_raw * grouped.mean()).clip(0.0, 100.0)
    return pd.DataFrame({"target": target, "n_ratings": grouped.size()}).reset_index()


def load_targets(session: Session, *, dimension: str = "meaning", z: bool = False) -> TargetTable:
    """The rated regular items of the study with their 0–100 target; UserError when none."""
    dim = _dimension(session, dimension)
    ratings = ratings_frame(session, dimension=dimension, kinds=("regular",))
    if ratings.empty:
        raise UserError(
            f"the study has no current ratings on the dimension {dimension!r}: rate items in "
            "the app or import a rated dataset before training"
        )
    span = float(dim.max_value) - float(dim.min_value)
    if span <= 0:
        raise UserError(
            f"the dimension {dimension!r} has an empty scale ({dim.min_value}–{dim.max_value})"
        )
    ratings = ratings[["item_id", "annotator", "value"]].copy()
    # A Likert 1–5 dimension is mapped onto 0–100, the scale the model's logit is read on.
    ratings["value"] = (ratings["value"].astype(float) - float(dim.min_value)) * (100.0 / span)
    targets = item_targets(ratings, z=z)
    items = items_frame(session, kinds=("regular",))
    frame = items.merge(targets, on="item_id", how="inner")
    frame = frame[TARGET_COLUMNS].sort_values("item_id").reset_index(drop=True)
    return TargetTable(
        frame=frame,
        dimension=dimension,
        z_scores=z,
        n_ratings=len(ratings),
        n_annotators=int(ratings["annotator"].nunique()),
    )
