"""The dashboard's data: loaded in the background, kept live as ratings and scores land.

Three speeds, so the window never freezes:
- a rating: change notifications are coalesced (at most one refresh every 250 ms); the
  ratings of the named items are read back and the point statistics recomputed on the
  GUI thread — the cheap path of `meaningbench.analysis.live`, kept there only while it takes
  ≤ 50 ms (measured each time; beyond that it moves to a worker);
- intervals, Kendall, agreement and rater QC: a worker job on a snapshot, debounced,
  one at a time; its results are shown as "updating" while the data has moved on;
- a batch of metric scores: coalesced (at most once a second while a battery runs), the
  named items' scores of each run are read back into the metric matrix and the statistics
  recomputed as after a rating; the whole analysis is read again in the background only
  for a wholesale change (settings, label sets, an import).

What a change does to the data is the view state's (`meaningbench.queries.dashboard_state`,
no Qt): this class holds it and adds the timers, the signals and the background jobs.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

from meaningbench.queries.dashboard import (
    AgreementResult,
    CorrelationTable,
    QCResult,
    SanityTable,
)
from meaningbench.queries.dashboard_jobs import Loaded, Refreshed, points_job, refresh_job
from meaningbench.queries.dashboard_state import DashboardState, Redraw, is_wholesale
from meaningbench.queries.dashboard_stats import STATISTICS, combine
from meaningbench.queries.raters import RaterCheck
from meaningbench.runtime import Job
from meaningbench.runtime.changes import EMPTY, StudyChanges
from meaningbench.ui.workers import JobFailure, JobHandle, JobRunner

if TYPE_CHECKING:
    from pathlib import Path

    from meaningbench.ui.context import StudyContext

T = TypeVar("T")

RATING_COALESCE_MS = 250
REFRESH_DEBOUNCE_MS = 600
SCORE_COALESCE_MS = 1000
# The cheap path's share of the 50 ms a refresh may take (reading the ratings back and
# redrawing take the rest); when the median of its last runs is over it, it moves to a
# worker.
LIVE_BUDGET_MS = 40.0


class DashboardController(QObject):
    loaded = Signal()  # new analysis state: dimensions, metric names, texts, heatmaps
    scores_changed = Signal()  # metric scores landed: heatmaps (and names, when new)
    live_changed = Signal()  # point statistics changed
    intervals_changed = Signal()  # bootstrap intervals (and Kendall) arrived
    quality_changed = Signal()  # agreement and rater QC arrived
    busy_changed = Signal(bool)
    failed = Signal(str)

    def __init__(self, context: StudyContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.runner = JobRunner(self, max_threads=2)
        self.runner.show_error_dialogs = False
        self.state = DashboardState()
        self.live: CorrelationTable | None = None
        self.live_kendall = False
        self.boot: CorrelationTable | None = None
        self.boot_version = -1
        self.agreement: AgreementResult | None = None
        self.qc: QCResult | None = None
        self.machines: list[RaterCheck] = []  # the machine raters' checks
        self.sanity: dict[tuple[str, int], SanityTable] = {}
        self.generation = 0
        self.active = True
        self.live_ms = 0.0  # the last cheap path on the GUI thread
        self.refresh_ms = 0.0  # the last whole refresh after ratings (read + compute + emit)
        self.read_ms = 0.0  # of which reading the ratings back
        self.draw_ms = 0.0  # of which updating the widgets
        self.live_on_gui = {False: True, True: True}  # by "with Kendall"
        self._timings: dict[bool, deque[float]] = {False: deque(maxlen=5), True: deque(maxlen=5)}
        self._dirty = False
        self._pending: set[int] = set()
        self._pending_all = False
        self._scores = EMPTY  # score batches told since the last flush
        self._load: JobHandle | None = None
        self._reload_again = False
        self._refresh: JobHandle | None = None
        self._refresh_again = False
        self._points: JobHandle | None = None
        self._points_again = False
        self._rating_timer = self._timer(RATING_COALESCE_MS, self.flush)
        self._refresh_timer = self._timer(REFRESH_DEBOUNCE_MS, self._start_refresh)
        self._score_timer = self._timer(SCORE_COALESCE_MS, self.flush_scores)
        context.study_opened.connect(lambda _s: self.open())
        context.study_closed.connect(self.close)
        context.study_changed.connect(self.on_study_changed)

    def _timer(self, ms: int, slot: Any) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(ms)
        timer.timeout.connect(slot)
        return timer

    @property
    def path(self) -> Path | None:
        return self.context.path

    # The options and the version live in the view state; the screens read them here.
    @property
    def dimension(self) -> str | None:
        return self.state.dimension

    @property
    def dimensions(self) -> tuple[str, ...]:
        return self.state.dimensions

    @property
    def z(self) -> bool:
        return self.state.z

    @property
    def groups(self) -> str:
        return self.state.groups

    @property
    def statistic(self) -> str:
        return self.state.statistic

    @property
    def version(self) -> int:
        return self.state.version

    @property
    def busy(self) -> bool:
        return any(h is not None for h in (self._load, self._refresh, self._points))

    def _start(self, job: Job[T], title: str, on_result: Callable[[T], None]) -> JobHandle:
        generation = self.generation

        def result(value: T) -> None:
            if generation == self.generation:
                on_result(value)

        handle = self.runner.start(job, title=title, on_result=result, on_failed=self._on_failed)
        handle.finished.connect(self._on_finished)
        self.busy_changed.emit(True)
        return handle

    def _on_failed(self, failure: JobFailure) -> None:
        self.failed.emit(f"{failure.title}: {failure.message}")

    def _on_finished(self) -> None:
        for name in ("_load", "_refresh", "_points"):
            handle = getattr(self, name)
            if handle is not None and not handle.running:
                setattr(self, name, None)
        if self._reload_again and self._load is None:
            self._reload_again = False
            self.reload()
        if self._refresh_again and self._refresh is None:
            self._refresh_again = False
            self._refresh_timer.start()
        if self._points_again and self._points is None:
            self._points_again = False
            self._recompute(refresh=False)
        self.busy_changed.emit(self.busy)

    # -- study ---------------------------------------------------------------------------
    def open(self) -> None:
        self.close()
        self.state.study = self.context.study
        if self.path is not None:
            self.reload()

    def close(self) -> None:
        self.generation += 1
        self.runner.cancel_all()
        for timer in (self._rating_timer, self._refresh_timer, self._score_timer):
            timer.stop()
        self.state.clear()
        self.live, self.boot = None, None
        self.agreement = self.qc = None
        self.machines = []
        self.sanity = {}
        self._pending.clear()
        self._scores = EMPTY
        self._pending_all = self._reload_again = self._refresh_again = False
        self._points_again = False
        self._load = self._refresh = self._points = None
        self.live_on_gui = {False: True, True: True}
        self._timings = {False: deque(maxlen=5), True: deque(maxlen=5)}

    def reload(self) -> None:
        """Read the whole analysis state again, in the background (a wholesale change)."""
        if self.path is None:
            return
        if self._load is not None:
            self._reload_again = True
            return
        self._pending_all = False
        self._load = self._start(self.state.load_job(self.path), "Dashboard", self._loaded)

    def _loaded(self, loaded: Loaded) -> None:
        # Ratings and scores told while the file was being read are applied again.
        self.state.install(loaded)
        self.loaded.emit()
        self._recompute(immediate_refresh=True)

    def set_active(self, active: bool) -> None:
        """A hidden dashboard keeps its ratings in step but computes nothing."""
        self.active = active
        if active and self._dirty:
            self._recompute(immediate_refresh=True)

    # -- options ---------------------------------------------------------------------------
    def set_dimension(self, dimension: str) -> None:
        if dimension == self.dimension:
            return
        self.state.dimension = dimension
        self.generation += 1
        self.runner.cancel_all()
        self._load = self._refresh = self._points = None
        self.live = self.boot = None
        self.agreement = self.qc = None
        self.machines = []
        self.reload()

    def set_z(self, z: bool) -> None:
        if self.state.set_z(z):
            self.boot = None
            self._recompute(immediate_refresh=True)

    def set_groups(self, groups: str) -> None:
        if groups != self.groups:
            self.state.groups = groups
            self.boot = None
            self.intervals_changed.emit()
            self._refresh_timer.start(0)

    def set_statistic(self, statistic: str) -> None:
        self.state.statistic = statistic
        if STATISTICS[statistic].needs_kendall and not self.live_kendall:
            self._recompute(refresh=False)
        else:
            self.live_changed.emit()

    # -- live updates ----------------------------------------------------------------------
    def on_study_changed(self, changes: StudyChanges) -> None:
        """Ratings and scores update the analysis by the ids they name; a wholesale change
        rereads it."""
        if is_wholesale(changes):
            self.reload()
            return
        if changes.ratings:
            self.on_ratings_changed(sorted(changes.ratings))
        if changes.scores or changes.runs:
            self._scores |= StudyChanges(scores=changes.scores, runs=changes.runs)
            if not self._score_timer.isActive():
                self._score_timer.start()

    def on_ratings_changed(self, item_ids: list[int]) -> None:
        if not item_ids:
            self._pending_all = True
        else:
            self._pending.update(int(i) for i in item_ids)
        if not self._rating_timer.isActive():
            self._rating_timer.start()

    def flush(self) -> None:
        """Apply the ratings named since the last flush, and recompute the live statistics."""
        self._rating_timer.stop()
        start = time.perf_counter()
        if self._pending_all:
            self.reload()
            return
        ids, self._pending = self._pending, set()
        redraw = self.state.apply(StudyChanges.of(ratings=ids))
        self.read_ms = (time.perf_counter() - start) * 1000.0
        self._redraw(redraw)
        self.refresh_ms = (time.perf_counter() - start) * 1000.0

    def flush_scores(self) -> None:
        """Read back the scores of the items the batches since the last flush named."""
        self._score_timer.stop()
        changes, self._scores = self._scores, EMPTY
        self._redraw(self.state.apply(changes))

    def _redraw(self, redraw: Redraw) -> None:
        if redraw.reload:
            self.reload()
            return
        if redraw.scores:
            self.scores_changed.emit()
        if redraw.statistics:
            self._recompute()
        elif redraw.quality and self.active:
            self._refresh_timer.start()  # control items feed rater QC

    def _recompute(self, *, refresh: bool = True, immediate_refresh: bool = False) -> None:
        if not self.state.loaded:
            return
        if not self.active:
            self._dirty = True
            return
        self._dirty = False
        kendall = STATISTICS[self.statistic].needs_kendall
        if not self.state.metric_names:
            self.live = self.state.live_table(kendall=kendall)
            self.live_changed.emit()
        elif self.live_on_gui[kendall]:
            start = time.perf_counter()
            self.live = self.state.live_table(kendall=kendall)
            self.live_ms = (time.perf_counter() - start) * 1000.0
            self.live_kendall = kendall
            timings = self._timings[kendall]
            timings.append(self.live_ms)
            # The median of the last runs, not one run: a busy machine has spikes.
            if len(timings) >= 3 and statistics.median(timings) > LIVE_BUDGET_MS:
                self.live_on_gui[kendall] = False  # from now on, on a worker
            start = time.perf_counter()
            self.live_changed.emit()  # the widgets redraw in their slots
            self.draw_ms = (time.perf_counter() - start) * 1000.0
        elif self._points is not None:
            self._points_again = True
        elif (snapshot := self.state.snapshot()) is not None:
            job = points_job(snapshot, kendall=kendall)
            self._points = self._start(job, "Dashboard statistics", self._points_done)
        if refresh:
            self._refresh_timer.start(0 if immediate_refresh else REFRESH_DEBOUNCE_MS)

    def _points_done(self, result: Refreshed) -> None:
        self.live = result.table
        self.live_kendall = STATISTICS[self.statistic].needs_kendall
        self.live_changed.emit()
        if result.version != self.version:
            self._points_again = True

    def _start_refresh(self) -> None:
        if not self.state.loaded or self.path is None or not self.active:
            return
        if self._refresh is not None:
            self._refresh_again = True
            return
        snapshot = self.state.snapshot()
        assert snapshot is not None  # loaded
        job = refresh_job(snapshot, self.path, groups=self.groups)
        self._refresh = self._start(job, "Dashboard intervals", self._refreshed)

    def _refreshed(self, result: Refreshed) -> None:
        if result.table.z != self.z or result.table.unit != (
            "groups" if self.groups == "sources" else "items"
        ):
            self._refresh_again = True  # options changed while it ran
            return
        self.boot, self.boot_version = result.table, result.version
        self.agreement, self.qc = result.agreement, result.qc
        self.machines = result.machines
        if result.version != self.version:
            self._refresh_again = True
        self.intervals_changed.emit()
        self.quality_changed.emit()

    # -- reads -----------------------------------------------------------------------------
    def table(self) -> CorrelationTable | None:
        """Point statistics now, with the latest intervals."""
        return combine(self.live, self.boot, live_has_kendall=self.live_kendall)

    @property
    def intervals_stale(self) -> bool:
        return self.boot is not None and self.boot_version != self.version

    def ceiling(self) -> float | None:
        a = self.agreement
        return a.ceiling if a is not None else None

    def shutdown(self) -> None:
        self.close()
        self.runner.wait(10_000)
