"""A study's analysis state, kept in memory and updated one rating or one batch at a time.

The dashboard holds one `StudyAnalysis`: the metric matrix with its sort orders cached,
and the ratings as arrays. A new rating updates the arrays (no database read); the next
`correlations()` without bootstrap recomputes every metric's statistics in numpy. Metric
batches that land mark the sort orders stale, recomputed once on the next call.

`correlation_table` is the one-shot version the CLI and the report use.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sqlalchemy.orm import Session

from meaningbench.analysis.correlation import (
    CorrelationTable,
    correlate_many,
    metric_correlations,
    williams_matrix,
)
from meaningbench.analysis.data import StudyData, load_study_data
from meaningbench.analysis.human import RatingKind
from meaningbench.analysis.kendall import KendallCache
from meaningbench.analysis.ranks import ColumnOrder, MaskedRanks
from meaningbench.db.study import Study

GROUPINGS = ("items", "sources")


class StudyAnalysis:
    def __init__(self, data: StudyData) -> None:
        self.data = data
        self._order: ColumnOrder | None = None
        self._ranks: MaskedRanks | None = None
        self._kendall = {False: KendallCache(), True: KendallCache()}  # raw means, z-scores
        self._item_pos = {int(i): k for k, i in enumerate(data.item_ids)}

    @classmethod
    def from_study(
        cls,
        study_or_session: Study | Session,
        dimension: str = "meaning",
        labels: str | None = None,
        dataset: str | None = None,
    ) -> StudyAnalysis:
        return cls(load_study_data(study_or_session, dimension, labels, dataset))

    @property
    def dimension(self) -> str:
        return self.data.dimension.name

    @property
    def metric_names(self) -> list[str]:
        return list(self.data.metric_names)

    # -- updates -------------------------------------------------------------------------
    def set_rating(
        self,
        item_id: int,
        annotator: str,
        value: float,
        *,
        kind: RatingKind = "named",
        rating_id: int | None = None,
    ) -> bool:
        """A submitted or revised rating; False when the item is not a regular item here."""
        return self.data.ratings.set(item_id, annotator, value, kind=kind, rating_id=rating_id)

    def remove_rating(self, item_id: int, annotator: str, *, rating_id: int | None = None) -> bool:
        return self.data.ratings.remove(item_id, annotator, rating_id=rating_id)

    def set_scores(
        self, column: str, item_ids: Sequence[int], values: Sequence[float | None]
    ) -> None:
        """Metric values that landed (a new column, or a batch filling an existing one)."""
        data = self.data
        if column not in data.metric_names:
            data.metric_names.append(column)
            data.metric_values = np.column_stack(
                [data.metric_values, np.full(data.n_items, np.nan)]
            )
        j = data.metric_names.index(column)
        if not data.metric_values.flags.writeable:  # pandas hands out read-only views
            data.metric_values = data.metric_values.copy()
        for item_id, value in zip(item_ids, values, strict=True):
            pos = self._item_pos.get(int(item_id))
            if pos is not None:
                data.metric_values[pos, j] = np.nan if value is None else float(value)
        self._order = None
        self._ranks = None
        self._kendall = {False: KendallCache(), True: KendallCache()}

    def insert_column(self, column: str) -> None:
        """An empty metric column (all NaN) where a fresh read puts it: `score_matrix`
        orders its columns by name."""
        data = self.data
        if column in data.metric_names:
            return
        j = bisect.bisect(data.metric_names, column)
        data.metric_names.insert(j, column)
        data.metric_values = np.insert(data.metric_values, j, np.nan, axis=1)
        self._order = None
        self._ranks = None
        self._kendall = {False: KendallCache(), True: KendallCache()}

    # -- reads ---------------------------------------------------------------------------
    @property
    def order(self) -> ColumnOrder:
        if self._order is None:
            self._order = ColumnOrder.of(self.data.metric_values)
        return self._order

    @property
    def ranks(self) -> MaskedRanks:
        """Mid-ranks under the current rated-item mask, updated in place between refreshes."""
        if self._ranks is None:
            self._ranks = MaskedRanks(self.data.metric_values, self.order)
        return self._ranks

    def human(self, z: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(human score per item for correlations, raw score on 0–100 for R² and RMSE)."""
        scores = self.data.ratings.scores()
        return scores.values(z), self.data.dimension.to_percent(scores.raw)

    def correlations(
        self,
        *,
        z: bool = False,
        n_boot: int = 0,
        seed: int = 0,
        groups: str = "items",
        confidence: float = 0.95,
        kendall: bool = True,
        columns: Sequence[str] | None = None,
    ) -> CorrelationTable:
        """Every metric against the human scores; `n_boot=0` is the cheap live path."""
        if groups not in GROUPINGS:
            raise ValueError(f"groups must be one of {GROUPINGS}")
        scores = self.data.ratings.scores()
        y, rating = scores.values(z), self.data.dimension.to_percent(scores.raw)
        x, names = self.data.metric_values, self.metric_names
        ranks: MaskedRanks | None = self.ranks
        if columns is not None:
            idx = [names.index(c) for c in columns]
            x, names, ranks = x[:, idx], [names[i] for i in idx], None
        table = correlate_many(
            x,
            y,
            names,
            n_boot=n_boot,
            seed=seed,
            groups=self.data.groups if groups == "sources" else None,
            systems=self.data.systems,
            rating_values=rating,
            confidence=confidence,
            kendall=kendall,
            ranks=ranks,
            kendall_cache=self._kendall[z] if columns is None else None,
            dimension=self.dimension,
            z=z,
        )
        table.extra["n_from_aggregate"] = int(scores.from_aggregate.sum())
        return table

    def scatter(self, column: str, *, z: bool = False) -> pd.DataFrame:
        """item_id, metric value and human score of the items that have both."""
        j = self.data.metric_names.index(column)
        y, _ = self.human(z)
        x = self.data.metric_values[:, j]
        keep = np.isfinite(x) & np.isfinite(y)
        return pd.DataFrame(
            {"item_id": self.data.item_ids[keep], "metric": x[keep], "human": y[keep]}
        )

    def metric_correlations(self, method: str = "pearson") -> pd.DataFrame:
        return metric_correlations(self.data.metric_values, self.metric_names, method=method)

    def williams(self, *, z: bool = False) -> pd.DataFrame:
        y, _ = self.human(z)
        return williams_matrix(self.data.metric_values, y, self.metric_names)


def correlation_table(
    study_or_session: Study | Session,
    dimension: str = "meaning",
    z: bool = False,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    groups: str = "items",
    confidence: float = 0.95,
    kendall: bool = True,
    labels: str | None = None,
) -> CorrelationTable:
    """Every metric run of the study against one human dimension, with bootstrap intervals."""
    analysis = StudyAnalysis.from_study(study_or_session, dimension, labels)
    return analysis.correlations(
        z=z, n_boot=n_boot, seed=seed, groups=groups, confidence=confidence, kendall=kendall
    )
