"""A study's regular items as `MetaEvalData`: human scores by the project's one rule, the
metric runs, systems, sources, per-rater raw ratings (for tau_like) and item attributes."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from meaningbench.analysis.data import StudyData, load_study_data, study_session
from meaningbench.analysis.human import NAMED
from meaningbench.analysis.metaeval import MetaEvalData
from meaningbench.analysis.metaeval_significance import Ranking
from meaningbench.analysis.metaeval_stability import (
    HISTORY,
    TREND,
    Snapshot,
    Stability,
    StabilityOptions,
    ranking_stability,
)
from meaningbench.analysis.score_columns import runs_frame
from meaningbench.db.frames import item_attributes_frame, ratings_frame
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.metrics.registry import metric_classes


def rater_matrix(data: StudyData) -> tuple[np.ndarray, list[str]]:
    """(n, R): each named rater's mean raw rating of each item, NaN where they did not
    rate it, and the raters' names, one per column. Aggregate labels and anonymous
    ratings are no rater's votes."""
    units = data.ratings.units(per_rater_only=True)
    keep = units.kinds == NAMED
    raters = units.raters[keep]
    codes, inv = np.unique(raters, return_inverse=True)
    out = np.full((data.n_items, codes.size), np.nan)
    out[units.items[keep], inv] = units.values[keep]
    names = data.ratings.annotators
    return out, [names[int(c)] if 0 <= int(c) < len(names) else str(c) for c in codes]


def metaeval_data_from_study(
    study: Study,
    dimension: str = "meaning",
    labels: str | None = None,
    metrics: Sequence[str] | None = None,
) -> MetaEvalData:
    """`metrics`: canonical metric names (default: every metric run of the study)."""
    data = load_study_data(study, dimension, labels)
    return metaeval_data_of(data, attributes_of(study, data), metrics)


def attributes_of(study: Study, data: StudyData) -> pd.DataFrame:
    """The attributes of `data`'s items, in its item order (metaeval's categories)."""
    with study_session(study) as session:
        return item_attributes_frame(session).reindex(data.item_ids)


def metaeval_data_of(
    data: StudyData, attrs: pd.DataFrame, metrics: Sequence[str] | None = None
) -> MetaEvalData:
    """`data` (with `attrs`, its items' attributes in item order) as `MetaEvalData`."""
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
    scores = data.ratings.scores()
    systems = data.items["system"].to_numpy(dtype=object)
    raters, rater_names = rater_matrix(data)
    return MetaEvalData(
        human=scores.raw,
        metrics=data.metric_values[:, cols],
        metric_names=[names[c] for c in cols],
        systems=np.array([s if isinstance(s, str) else None for s in systems], dtype=object),
        sources=data.items["source_group"].astype(str).to_numpy(dtype=object),
        raters=raters,
        categories={str(c): attrs[c].to_numpy(dtype=object) for c in attrs.columns},
        scale=(data.dimension.min_value, data.dimension.max_value),
        rater_names=rater_names,
    )


def metaeval_snapshots(
    study: Study, fractions: Sequence[float], dimension: str = "meaning"
) -> list[Snapshot]:
    """The study's outputs as they stood after each share of its human ratings
    (`fractions`), the ratings in the order they were given (submitted time, then rating id).

    After a share f of the N ratings in, the first ceil(f·N) of them count; the human
    scores are the project's rule on those alone."""
    data = load_study_data(study, dimension)
    with study_session(study) as session:
        attrs = item_attributes_frame(session).reindex(data.item_ids)
        times = ratings_frame(session, dimension=dimension, kinds=("regular",))
    # A machine rater's ratings (`judge --as-rater`) are no human's: they never enter the
    # human scores, so they are neither counted nor replayed; they stay where they are.
    machine = set(times.loc[times["annotator_kind"] == "machine", "rating_id"])
    active = {k: v for k, v in data.ratings.active_keys(data.item_ids).items() if k not in machine}
    times = times[times["rating_id"].isin(active)]
    order = times.sort_values(["submitted_at", "rating_id"], kind="stable")["rating_id"].tolist()
    # Keys that are not rating ids (none when read from a study) count as given first.
    given = set(order)
    order = [k for k in active if k not in given] + order
    out = []
    for f in sorted(set(fractions)):
        keep = math.ceil(f * len(order) - 1e-9)
        ratings = copy.deepcopy(data.ratings)
        for key in order[keep:]:
            ratings.discard(key)
        snap = copy.copy(data)
        snap.ratings = ratings
        out.append(Snapshot(f, keep, metaeval_data_of(snap, attrs)))
    return out


def metric_configs(study: Study, names: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each named score column's metric and the configuration that produced it, runtime
    options (device, batch size, caches) left out: what a methods section must name."""
    with study_session(study) as session:
        runs = runs_frame(session)
    classes = metric_classes()
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for metric, config, column in zip(runs["metric"], runs["config"], runs["column"], strict=True):
        if column not in names:
            continue
        cls = classes.get(str(metric))
        skip = cls.runtime_options if cls is not None else frozenset()
        out[str(column)] = (str(metric), {k: v for k, v in dict(config).items() if k not in skip})
    return out


def stopping_signal(
    study: Study, ranking: Ranking, dimension: str = "meaning", tie_threshold: float = 5.0
) -> Stability:
    """Is it time to stop rating, for the ranking just made (its measure, grouping, test,
    resamples and seed): the study's ratings replayed in the order they were given."""
    options = StabilityOptions(
        measure=ranking.measure,
        group_by=ranking.group_by,
        test=ranking.test,
        alpha=ranking.alpha,
        tie_threshold=tie_threshold,
        seed=ranking.seed,
        ranking_resamples=ranking.resamples,
    )
    snaps = metaeval_snapshots(study, HISTORY + TREND, dimension)
    return ranking_stability(snaps, options)
