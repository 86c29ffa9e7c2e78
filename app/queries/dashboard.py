"""What the dashboard reads from a study: its analysis state, and the ratings that changed.

A change notification names items, not ratings (a submission, a revision and an undo
look alike), so the current ratings of those items are read back and reconciled by
rating id: new ratings are set, withdrawn or superseded ones removed. Reading a handful
of items is a millisecond; the full reload is kept for wholesale changes.

Which labels count is `meaningbench.analysis.label_sets.select_labels`, the rule the
analysis applied when it loaded; how ratings make a score is `meaningbench.analysis.human`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sqlalchemy import select

from meaningbench.analysis.agreement import AgreementResult
from meaningbench.analysis.correlation import CorrelationTable
from meaningbench.analysis.label_sets import select_labels
from meaningbench.analysis.live import StudyAnalysis
from meaningbench.analysis.qc import QCResult
from meaningbench.analysis.sanity import IDENTICAL_THRESHOLDS, UNRELATED_THRESHOLDS, SanityTable
from meaningbench.analysis.score_columns import column_runs
from meaningbench.db.current_ratings import is_current
from meaningbench.db.models import Annotator, Dimension, Rating
from meaningbench.db.study import open_study
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.queries.study import dimension_names

if TYPE_CHECKING:
    pass

# The result types the dashboard's questions answer with (its screens name them), and the
# similarity thresholds the sanity table is laid out by.
__all__ = [
    "IDENTICAL_THRESHOLDS",
    "UNRELATED_THRESHOLDS",
    "AgreementResult",
    "CorrelationTable",
    "LoadedAnalysis",
    "QCResult",
    "SanityTable",
    "apply_rating_changes",
    "current_ratings",
    "load_analysis",
    "pick_dimension",
    "report_summary",
]

CHUNK = 500  # SQLite's parameter limit is far above; keeps each IN list small
RATING_COLUMNS = ["rating_id", "item_id", "annotator", "annotator_kind", "value"]


def current_ratings(handle: StudyHandle, item_ids: list[int], dimension: str) -> pd.DataFrame:
    """The items' current ratings on `dimension`: rating_id, item_id, annotator,
    annotator_kind, value, origin (every label set's aggregates included; the origin says
    which labels are a lead's decisions on disagreements)."""
    study = study_of(handle)
    rows: list[tuple[int, int, str, str, float, str]] = []
    with study.session() as session:
        for start in range(0, len(item_ids), CHUNK):
            chunk = item_ids[start : start + CHUNK]
            stmt = (
                select(
                    Rating.id,
                    Rating.item_id,
                    Annotator.name,
                    Annotator.kind,
                    Rating.value,
                    Rating.origin,
                )
                .join(Annotator, Annotator.id == Rating.annotator_id)
                .join(Dimension, Dimension.id == Rating.dimension_id)
                .where(
                    Rating.item_id.in_(chunk),
                    is_current(),
                    Dimension.name == dimension,
                )
            )
            rows.extend(
                (int(r), int(i), str(n), str(k), float(v), str(o or ""))
                for r, i, n, k, v, o in session.execute(stmt)
            )
    return pd.DataFrame(rows, columns=[*RATING_COLUMNS, "origin"])


def apply_rating_changes(
    analysis: StudyAnalysis, handle: StudyHandle, item_ids: Iterable[int]
) -> int:
    """Reconcile the analysis with the study file for these items; returns how many of its
    ratings (regular items only) were added, revised or removed."""
    study = study_of(handle)
    ratings = analysis.data.ratings
    known = ratings.item_ids
    ids = np.unique(np.asarray(list(item_ids), dtype=np.int64))
    if ids.size == 0 or known.size == 0:
        return 0
    at = np.clip(np.searchsorted(known, ids), 0, known.size - 1)
    regular = ids[known[at] == ids]
    if regular.size == 0:
        return 0
    rows = current_ratings(study, regular.tolist(), analysis.dimension)
    sets = analysis.data.label_sets
    if sets is not None:  # labels of a set the analysis does not read stay out, as at load
        rows = select_labels(rows, sets)
    wanted = {
        int(rid): (int(item_id), str(name), str(kind), float(value))
        for rid, item_id, name, kind, value in rows[RATING_COLUMNS].itertuples(
            index=False, name=None
        )
    }
    existing = ratings.active_keys(regular)
    changed = 0
    for key in existing.keys() - wanted.keys():
        changed += ratings.discard(key)
    for rid, (item_id, name, kind, value) in wanted.items():
        if existing.get(rid) != (item_id, value):
            changed += analysis.set_rating(item_id, name, value, kind=kind, rating_id=rid)  # type: ignore[arg-type]
    return changed


@dataclass(frozen=True)
class LoadedAnalysis:
    """A study's analysis state on one dimension, the dimensions it has, and each score
    column's (metric, config hash) as they were just before the read (a run renamed
    later, under a column the analysis has, is then told apart)."""

    analysis: StudyAnalysis
    dimensions: list[str]
    runs: dict[str, tuple[str, str]] = field(default_factory=dict)


def pick_dimension(wanted: str | None, known: list[str]) -> str:
    if wanted in known:
        return str(wanted)
    return "meaning" if "meaning" in known or not known else known[0]


def load_analysis(path: Path, dimension: str | None) -> LoadedAnalysis:
    """The analysis of `dimension` (or the default one) read from the study file."""
    with open_study(path, allow_read_only=True) as study:
        known = dimension_names(study)
        with study.session() as session:
            runs = column_runs(session)
        analysis = StudyAnalysis.from_study(study, pick_dimension(dimension, known))
    return LoadedAnalysis(analysis, known, runs)


def report_summary(handle: StudyHandle) -> dict[str, Any]:
    """The counts a study report opens with."""
    study = study_of(handle)
    from meaningbench.analysis.report import study_summary

    with study.session() as session:
        return study_summary(session)
