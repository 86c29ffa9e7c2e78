"""The training targets: one human score per rated item, on the 0–100 scale.

The item's human score is the one rule of `meaningbench.analysis.human`, so a model learns exactly
what the dashboard correlates metrics with and `export` writes: each rater's current
ratings of the item averaged, then the raters (named and anonymous) averaged, or its
aggregate labels (a dataset's published mean) where no rater rated it; ratings of a
Likert dimension are mapped onto 0–100 first.

With `z=True` the score is the item's mean per-annotator z-score (items rated only
anonymously have none and are left out), re-expressed linearly on
the scale of the raw scores: rescaled to the mean and SD of the raw item scores, clipped to
0–100. Training on z directly would not work with the augmentation, whose identical (100)
and unrelated (0) pairs live on the rating scale, nor with the battery, which reads the
model's logit as a 0–100 score; a linear map keeps z's order and spacing (its Pearson
correlation with anything is unchanged).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy.orm import Session

from meaningbench.analysis.data import dimension_info
from meaningbench.analysis.human import RatingSet
from meaningbench.db.frames import items_frame, ratings_frame
from meaningbench.errors import UserError

TARGET_COLUMNS = [
    "item_id",
    "dataset",
    "source",
    "output",
    "system",
    "source_group",
    "target",
    "n_ratings",
]


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


def rescale_like(z: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """`z` moved linearly to the mean and sample SD of `raw`, clipped to 0–100."""
    mean_raw = float(np.mean(raw))
    sd_raw = float(np.std(raw, ddof=1)) if len(raw) > 1 else 0.0
    sd_z = float(np.std(z, ddof=1)) if len(z) > 1 else 0.0
    if not np.isfinite(sd_z) or sd_z <= 0:
        return np.full(len(z), np.clip(mean_raw, 0.0, 100.0))
    return np.asarray(np.clip(mean_raw + (z - np.mean(z)) * (sd_raw / sd_z), 0.0, 100.0))


def load_targets(
    session: Session, *, dimension: str = "meaning", z: bool = False, labels: str | None = None
) -> TargetTable:
    """The rated regular items of the study with their 0–100 target; UserError when none.

    `labels`: the aggregate label set read (see `meaningbench.analysis.label_sets`)."""
    from meaningbench.analysis.label_sets import resolve_label_sets, select_labels

    dim = dimension_info(session, dimension)
    if dim.max_value <= dim.min_value:
        raise UserError(
            f"the dimension {dimension!r} has an empty scale ({dim.min_value}–{dim.max_value})"
        )
    items = items_frame(session, kinds=("regular",))
    ratings = ratings_frame(session, dimension=dimension, kinds=("regular",))
    ratings = select_labels(ratings, resolve_label_sets(session, labels))
    if ratings.empty or items.empty:
        raise UserError(
            f"the study has no current ratings on the dimension {dimension!r}: rate items in "
            "the app or import a rated dataset before training"
        )
    ratings = ratings.assign(value=dim.to_percent(ratings["value"].to_numpy(dtype=np.float64)))
    scores = RatingSet.from_frame(ratings, items["item_id"].to_numpy()).scores()
    # With z, items rated only anonymously have no z-score (no rater to standardise by).
    rated = np.isfinite(scores.raw) & (np.isfinite(scores.z) if z else True)
    if z and not rated.any():
        raise UserError(
            f"no item has a z-score on {dimension!r}: its ratings have no rater ids, and "
            "z-scores need to know whose ratings are whose; train on the raw scores"
        )
    frame = items.loc[rated].reset_index(drop=True)
    raw = scores.raw[rated]
    frame["target"] = rescale_like(scores.z[rated], raw) if z else raw
    frame["n_ratings"] = scores.n_ratings[rated].astype(int)
    used = ratings[ratings["item_id"].isin(set(frame["item_id"]))]
    return TargetTable(
        frame=frame[TARGET_COLUMNS],
        dimension=dimension,
        z_scores=z,
        n_ratings=int(frame["n_ratings"].sum()),
        n_annotators=int(used["annotator"].nunique()),
    )
