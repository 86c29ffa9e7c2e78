"""The dashboard's view state, without Qt: the analysis it shows, its options, and what a
change asks it to redraw.

The screen holds one `DashboardState` and hands it every `StudyChanges`; `apply` brings the
analysis in step by the ids the change names and answers with a `Redraw`, the parts of the
dashboard that must be drawn again:
- ratings: the named items' current ratings are read back and reconciled
  (`meaningbench.queries.dashboard.apply_rating_changes`);
- a batch of scores: only the named items' scores of that run's column are read, in one
  query per label (and per 500 items), and set in the metric matrix; a label the analysis
  has no column for yet becomes a new column, where a fresh read would put it;
- anything wholesale (settings, label sets, items, an import), or a score column whose
  run changed under its name: `Redraw.reload`, the analysis is read again whole.

Changes that arrive while a whole read runs are applied again once it is installed: the
read may have begun before they were committed.

The screens draw what the reads give (metric names, the live table, a scatter, the
heatmaps, a snapshot for the background jobs); the engine object stays in here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from meaningbench.analysis.correlation import CorrelationTable
from meaningbench.analysis.live import StudyAnalysis
from meaningbench.analysis.score_columns import column_runs, column_scores
from meaningbench.queries.dashboard import apply_rating_changes
from meaningbench.queries.dashboard_jobs import (
    HEATMAP_METHODS,
    Loaded,
    Snapshot,
    empty_table,
    load_job,
)
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job
from meaningbench.runtime.changes import EMPTY, StudyChanges

FULL_RELOAD_ITEMS = 5000  # ratings of more items than this at once: read everything again
Run = tuple[str, str]  # a score column's (metric, config hash)


@dataclass(frozen=True)
class Redraw:
    """What a change asks the dashboard to draw again."""

    reload: bool = False  # read the whole analysis again (in the background)
    ratings: bool = False  # the regular items' human scores changed
    scores: bool = False  # metric values changed: statistics, scatter, heatmaps
    metrics: bool = False  # the metric columns changed: their names too
    quality: bool = False  # ratings changed that only rater QC reads (control items)

    @property
    def statistics(self) -> bool:
        """The correlations must be computed again."""
        return self.ratings or self.scores

    def __or__(self, other: Redraw) -> Redraw:
        return Redraw(
            reload=self.reload or other.reload,
            ratings=self.ratings or other.ratings,
            scores=self.scores or other.scores,
            metrics=self.metrics or other.metrics,
            quality=self.quality or other.quality,
        )


NOTHING = Redraw()
RELOAD = Redraw(reload=True)


def is_wholesale(changes: StudyChanges) -> bool:
    """A change the named ids cannot follow: the analysis is read again whole."""
    return changes.everything or changes.settings or bool(changes.label_sets or changes.items)


class DashboardState:
    """The analysis of one study on one dimension, the dashboard's options, and its version
    (raised whenever the statistics change, so background results can tell they are old)."""

    def __init__(self) -> None:
        self.study: StudyHandle | None = None
        self.dimension: str | None = None
        self.z = False
        self.groups = "items"
        self.statistic = "pearson"
        self.version = 0
        self.dimensions: tuple[str, ...] = ()
        # The engine's state: only the queries (and tests) reach into it.
        self.analysis: StudyAnalysis | None = None
        self._runs: dict[str, Run] = {}  # each known column's run, as read before the load
        self._heatmaps: dict[str, pd.DataFrame] = {}
        self._loading = False
        self._held = EMPTY  # changes told while a whole read runs

    # -- loading -----------------------------------------------------------------------------
    def load_job(self, path: Path) -> Job[Loaded]:
        """The whole read, for a worker; changes told until `install` are held for it."""
        self._loading, self._held = True, EMPTY
        return load_job(path, self.dimension)

    def install(self, loaded: Loaded) -> None:
        """A whole read's result, with the changes told while it ran applied again."""
        self.analysis = loaded.analysis
        self.dimensions = tuple(loaded.dimensions)
        self.dimension = loaded.analysis.dimension
        self._runs = {c: r for c, r in loaded.runs.items() if c in loaded.analysis.metric_names}
        self._heatmaps = dict(loaded.heatmaps)
        held, self._held, self._loading = self._held, EMPTY, False
        # Settings and the like started this read (or the next one): the ids are what's left.
        self._apply_ids(StudyChanges(ratings=held.ratings, scores=held.scores, runs=held.runs))
        self.version += 1

    def clear(self) -> None:
        self.study = None
        self.analysis = None
        self.dimensions = ()
        self._runs, self._heatmaps = {}, {}
        self._loading, self._held = False, EMPTY

    @property
    def loaded(self) -> bool:
        return self.analysis is not None

    # -- changes -------------------------------------------------------------------------------
    def apply(self, changes: StudyChanges) -> Redraw:
        """Bring the analysis in step with what `changes` names; what to draw again."""
        if is_wholesale(changes):
            return RELOAD
        if self._loading:
            self._held |= changes
        redraw = self._apply_ids(changes)
        if redraw.statistics:
            self.version += 1
        return redraw

    def _apply_ids(self, changes: StudyChanges) -> Redraw:
        if self.analysis is None or self.study is None:
            return NOTHING
        if len(changes.ratings) > FULL_RELOAD_ITEMS:
            return RELOAD
        redraw = NOTHING
        if changes.ratings:
            changed = apply_rating_changes(self.analysis, self.study, changes.ratings)
            redraw |= Redraw(ratings=True) if changed else Redraw(quality=True)
        if changes.scores or changes.runs:
            redraw |= self._apply_scores(self.analysis, self.study, changes.scores)
        return redraw

    def _apply_scores(
        self,
        analysis: StudyAnalysis,
        handle: StudyHandle,
        scores: tuple[tuple[str, frozenset[int]], ...],
    ) -> Redraw:
        """Each label's named items read back and set; a run that changed under a known
        column's name (an older run renamed, a model registered) needs the whole read."""
        redraw = NOTHING
        with study_of(handle).session() as session:
            runs = column_runs(session)
            if any(runs.get(column) != run for column, run in self._runs.items()):
                return RELOAD
            for label, item_ids in scores:
                run = runs.get(label)
                if run is None:  # named unlike its column: no telling which it fills
                    return RELOAD
                got = column_scores(session, run, item_ids)
                if label not in self._runs:
                    if not got:
                        continue  # no score counts yet: a fresh read has no such column
                    analysis.insert_column(label)
                    self._runs[label] = run
                    redraw |= Redraw(metrics=True)
                ids = sorted(item_ids)
                analysis.set_scores(label, ids, [got.get(i, np.nan) for i in ids])
                redraw |= Redraw(scores=True)
        if redraw.scores:
            self._heatmaps = {}
        return redraw

    def set_z(self, z: bool) -> bool:
        """Whether the scale changed (the statistics are then computed again)."""
        if z == self.z:
            return False
        self.z = z
        self.version += 1
        return True

    # -- reads -----------------------------------------------------------------------------------
    @property
    def metric_names(self) -> tuple[str, ...]:
        return tuple(self.analysis.metric_names) if self.analysis is not None else ()

    @property
    def label_sets(self) -> tuple[str, ...]:
        """The published or fixed label sets that stand in for unrated items."""
        sets = self.analysis.data.label_sets if self.analysis is not None else None
        return tuple(sets or ())

    @property
    def rater_names(self) -> tuple[str, ...]:
        return tuple(self.analysis.data.ratings.annotators) if self.analysis is not None else ()

    def items(self) -> pd.DataFrame:
        """The regular items (id, source, output, system, ...), for the scatter's texts."""
        return self.analysis.data.items if self.analysis is not None else pd.DataFrame()

    def live_table(self, *, kendall: bool) -> CorrelationTable | None:
        """The point statistics now (no bootstrap): the cheap path of the live dashboard."""
        analysis = self.analysis
        if analysis is None:
            return None
        if not analysis.metric_names:
            rated = int(np.isfinite(analysis.human()[0]).sum())
            return empty_table(analysis.dimension, self.z, rated)
        return analysis.correlations(z=self.z, n_boot=0, kendall=kendall)

    def scatter(self, column: str) -> pd.DataFrame | None:
        """item_id, metric value and human score of the items that have both."""
        if self.analysis is None or column not in self.analysis.metric_names:
            return None
        return self.analysis.scatter(column, z=self.z)

    def heatmap(self, method: str) -> pd.DataFrame | None:
        """The metric × metric correlations, computed again after scores landed."""
        if self.analysis is None or method not in HEATMAP_METHODS:
            return None
        if method not in self._heatmaps:
            self._heatmaps[method] = self.analysis.metric_correlations(method)
        return self._heatmaps[method]

    def snapshot(self) -> Snapshot | None:
        """Copies of the analysis inputs at this version, for a worker."""
        if self.analysis is None:
            return None
        return Snapshot.of(self.analysis, z=self.z, version=self.version)
