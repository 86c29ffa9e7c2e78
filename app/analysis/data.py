"""What the analysis reads from a study: regular items, metric values, ratings of a dimension.

Rows come from `meaningbench.db.frames` (current ratings, the newest score per metric config) and the
item's human score from the one rule of `meaningbench.analysis.human` (`RatingSet`), as in exports
and the UI. Control items are left out of correlations and agreement (their ratings feed
rater QC only).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.analysis.correlation import encode_labels
from meaningbench.analysis.human import RatingSet
from meaningbench.analysis.score_columns import score_matrix
from meaningbench.db.frames import items_frame, ratings_frame
from meaningbench.db.models import Dimension
from meaningbench.db.study import Study
from meaningbench.errors import UserError


@contextmanager
def study_session(study_or_session: Study | Session) -> Iterator[Session]:
    """A session from a Study (opened and closed here) or the caller's own session."""
    if isinstance(study_or_session, Session):
        yield study_or_session
        return
    with study_or_session.session() as session:
        yield session


@dataclass
class DimensionInfo:
    name: str
    scale: str
    min_value: float
    max_value: float

    def to_percent(self, values: np.ndarray) -> np.ndarray:
        """Ratings mapped onto the metrics' 0–100 scale (a Likert 1–5 becomes 0, 25, ...)."""
        span = self.max_value - self.min_value
        if span <= 0 or (self.min_value == 0.0 and self.max_value == 100.0):
            return values
        return (values - self.min_value) / span * 100.0


def dimension_info(session: Session, name: str) -> DimensionInfo:
    row = session.scalar(select(Dimension).where(Dimension.name == name))
    if row is None:
        known = session.scalars(select(Dimension.name).order_by(Dimension.position)).all()
        raise UserError(f"no dimension {name!r} in this study; known: {', '.join(known)}")
    return DimensionInfo(row.name, row.scale, float(row.min_value), float(row.max_value))


@dataclass
class StudyData:
    """Regular items aligned with their metric values and their ratings of one dimension."""

    items: pd.DataFrame  # items_frame of regular items, in item_id order
    item_ids: np.ndarray
    metric_names: list[str]
    metric_values: np.ndarray  # (n_items, n_metrics), NaN = not scored
    ratings: RatingSet
    dimension: DimensionInfo
    systems: np.ndarray  # integer code per item, -1 = none
    groups: np.ndarray  # integer code per source group
    label_sets: list[str] | None = None  # the aggregate sources read (None: not resolved)

    @property
    def n_items(self) -> int:
        return int(self.item_ids.size)


def load_study_data(
    study_or_session: Study | Session,
    dimension: str = "meaning",
    labels: str | None = None,
    dataset: str | None = None,
) -> StudyData:
    """`labels`: the aggregate label set to read (default: the study's choice; see
    `meaningbench.analysis.label_sets`); `dataset`: only that dataset's items (default: all)."""
    from meaningbench.analysis.label_sets import resolve_label_sets, select_labels

    with study_session(study_or_session) as session:
        dim = dimension_info(session, dimension)
        items = items_frame(session, kinds=("regular",), dataset=dataset)
        if dataset is not None and items.empty:
            raise UserError(f"no regular items in a dataset {dataset!r} in this study")
        ratings = ratings_frame(session, dimension=dimension, kinds=("regular",))
        label_sets = resolve_label_sets(session, labels)
        ratings = select_labels(ratings, label_sets)
        matrix = score_matrix(session)
    item_ids = items["item_id"].to_numpy(dtype=np.int64)
    if matrix.empty:
        names: list[str] = []
        values = np.empty((item_ids.size, 0))
    else:
        names = [str(c) for c in matrix.columns]
        values = matrix.reindex(item_ids).to_numpy(dtype=np.float64)
    systems = encode_labels(items["system"].tolist())
    groups = encode_labels(items["source_group"].tolist())
    return StudyData(
        items=items,
        item_ids=item_ids,
        metric_names=names,
        metric_values=values,
        ratings=RatingSet.from_frame(ratings, item_ids),
        dimension=dim,
        systems=systems if systems is not None else np.full(item_ids.size, -1),
        groups=groups if groups is not None else np.zeros(item_ids.size, dtype=np.intp),
        label_sets=label_sets,
    )
