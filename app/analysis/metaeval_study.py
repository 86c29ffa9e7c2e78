"""A study's regular items as `MetaEvalData`: human scores by the project's one rule, the
metric runs, systems, sources, per-rater raw ratings (for tau_like) and item attributes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from meaningbench.analysis.data import StudyData, load_study_data, study_session
from meaningbench.analysis.human import NAMED
from meaningbench.analysis.metaeval import MetaEvalData
from meaningbench.db.frames import item_attributes_frame
from meaningbench.db.study import Study
from meaningbench.errors import UserError


def rater_matrix(data: StudyData) -> np.ndarray:
    """(n, R): each named rater's mean raw rating of each item, NaN where they did not
    rate it. Aggregate labels and anonymous ratings are no rater's votes."""
    units = data.ratings.units(per_rater_only=True)
    keep = units.kinds == NAMED
    raters = units.raters[keep]
    codes, inv = np.unique(raters, return_inverse=True)
    out = np.full((data.n_items, codes.size), np.nan)
    out[units.items[keep], inv] = units.values[keep]
    return out


def metaeval_data_from_study(
    study: Study,
    dimension: str = "meaning",
    labels: str | None = None,
    metrics: Sequence[str] | None = None,
) -> MetaEvalData:
    """`metrics`: canonical metric names (default: every metric run of the study)."""
    return metaeval_data_of(study, load_study_data(study, dimension, labels), metrics)


def metaeval_data_of(
    study: Study, data: StudyData, metrics: Sequence[str] | None = None
) -> MetaEvalData:
    """`metaeval_data_from_study` on study data already loaded (`load_study_data`)."""
    names = list(data.metric_names)
    if metrics:
        missing = [m for m in metrics if m not in names]
        if missing:
            raise UserError(
                f"no scores of {', '.join(missing)} in this study; scored: {', '.join(names) or 'none'}"
            )
        cols = [names.index(m) for m in metrics]
    else:
        cols = list(range(len(names)))
    with study_session(study) as session:
        attrs = item_attributes_frame(session).reindex(data.item_ids)
    scores = data.ratings.scores()
    systems = data.items["system"].to_numpy(dtype=object)
    return MetaEvalData(
        human=scores.raw,
        metrics=data.metric_values[:, cols],
        metric_names=[names[c] for c in cols],
        systems=np.array([s if isinstance(s, str) else None for s in systems], dtype=object),
        sources=data.items["source_group"].astype(str).to_numpy(dtype=object),
        raters=rater_matrix(data),
        categories={str(c): attrs[c].to_numpy(dtype=object) for c in attrs.columns},
        scale=(data.dimension.min_value, data.dimension.max_value),
    )
