"""One metric's run inside the scoring job, and the scheduler that keeps the worker
processes busy in the background while this process scores the cheap metrics.

Every database write happens here, in the job's thread: workers only compute. A pooled
metric's chunks are written as they come back, between the chunks this process scores, so
two cores work at once even when only one metric is expensive (TER beside the rest).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from meaningbench.db.study import Study
from meaningbench.jobs.score_claims import release
from meaningbench.jobs.score_exec import (
    POOL_CHUNK,
    MetricBroken,
    WorkerPool,
    describe,
    pool_score,
    score_with_fallback,
)
from meaningbench.jobs.score_store import finish_run, write_scores
from meaningbench.metrics.base import ItemScore, Metric, Pair
from meaningbench.runtime import CancelToken

BatchCallback = Callable[[str, list[int]], None]


@dataclass(frozen=True)
class MetricRunSummary:
    metric: str
    label: str
    run_id: int | None
    status: str  # done | failed | cancelled | unavailable | cached
    scored: int
    cached: int
    failed: int
    elapsed_s: float
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        from dataclasses import asdict

        return asdict(self)


@dataclass
class Tally:
    scored: int = 0
    failed: int = 0
    first_error: str | None = None

    def add(self, scores: Sequence[ItemScore]) -> None:
        for s in scores:
            if s.error is None:
                self.scored += 1
            else:
                self.failed += 1
                if self.first_error is None:
                    self.first_error = s.error


@dataclass
class MetricRun:
    """The items one metric must score in this job, its `metric_run` row and its tally."""

    study: Study
    metric: Metric
    label: str
    pairs: list[Pair]
    digests: list[str]  # input hash of each pair
    old_rows: dict[int, list[int]]  # score rows the new scores replace, by item
    cached: int
    report: Callable[[str, list[int], int], None]  # (label, item ids, count) after a commit
    run_id: int  # the claimed metric_run row (see meaningbench.jobs.score_claims)
    # What a resumed (interrupted) run had done before this job took it over.
    items_before: int = 0
    failed_before: int = 0
    elapsed_before: float = 0.0
    tally: Tally = field(default_factory=Tally)
    began: float = field(default_factory=time.perf_counter)
    summary: MetricRunSummary | None = None  # set once finished
    in_pool: int = 0  # chunks handed to the workers and not written yet

    @property
    def open(self) -> bool:
        return self.summary is None

    def write(self, start: int, end: int, scores: Sequence[ItemScore]) -> None:
        ids = [p.item_id for p in self.pairs[start:end]]
        replaced = [row for item_id in ids for row in self.old_rows.get(item_id, ())]
        write_scores(self.study, self.run_id, ids, self.digests[start:end], scores, replaced)
        self.tally.add(scores)
        self.report(self.label, ids, end - start)

    def finish(self, status: str | None = None, error: str | None = None) -> MetricRunSummary:
        """Close the run: `done` unless told otherwise, `failed` when nothing scored."""
        if self.summary is not None:
            return self.summary
        if status is None:
            status = "done"
            if self.tally.scored == 0 and self.tally.failed > 0:
                status, error = "failed", self.tally.first_error
        elapsed = time.perf_counter() - self.began
        try:
            device = self.metric.device()
        except Exception:
            device = None
        try:
            finish_run(
                self.study,
                self.run_id,
                status=status,
                n_items=self.items_before + self.tally.scored + self.tally.failed,
                n_failed=self.failed_before + self.tally.failed,
                elapsed_s=self.elapsed_before + elapsed,
                error=error,
                device=device,
            )
        finally:
            release(self.run_id)
        self.summary = MetricRunSummary(
            self.metric.name, self.label, self.run_id, status, self.tally.scored, self.cached,
            self.tally.failed, elapsed, error,
        )  # fmt: skip
        return self.summary


class PoolScheduler:
    """Chunks of pooled runs, handed to the workers a few at a time and written back in the
    order they were handed out. `pump()` does what is ready without waiting; `drain()`, at
    the end, scores queued chunks here too instead of waiting for the workers.
    """

    def __init__(self, pool: WorkerPool, cancel: CancelToken) -> None:
        self.pool = pool
        self.cancel = cancel
        self._queue: deque[tuple[MetricRun, int, int]] = deque()
        self._inflight: deque[tuple[MetricRun, int, int, Future[list[ItemScore]]]] = deque()

    def add(self, run: MetricRun, start: int) -> None:
        for s in range(start, len(run.pairs), POOL_CHUNK):
            self._queue.append((run, s, min(len(run.pairs), s + POOL_CHUNK)))
            run.in_pool += 1
        if run.in_pool == 0:
            run.finish()
        self._feed()

    def _feed(self) -> None:
        executor = self.pool.executor()
        while self._queue and len(self._inflight) < 2 * self.pool.workers:
            run, s, e = self._queue.popleft()
            if not run.open:
                continue
            cls, config = type(run.metric), dict(run.metric.config)
            future = executor.submit(pool_score, cls, config, run.pairs[s:e])
            self._inflight.append((run, s, e, future))

    def pump(self) -> None:
        """Write the chunks that came back, in order, and hand out more; never waits."""
        self._step(block=False)

    def drain(self) -> None:
        """Wait for every chunk (checking the cancel token), writing each as it comes."""
        self._step(block=True)

    def _step(self, *, block: bool) -> None:
        try:
            while self._inflight:
                run, s, e, future = self._inflight[0]
                if not future.done():
                    if not block:
                        return
                    if self._queue:
                        # Rather than wait, score the last chunk still queued here.
                        self._score_here(*self._queue.pop())
                        continue
                    while not future.done():
                        self.cancel.check()
                        time.sleep(0.02)
                self._inflight.popleft()
                self._complete(run, s, e, future)
                self._feed()
        except BrokenProcessPool:
            self._recover()

    def _score_here(self, run: MetricRun, s: int, e: int) -> None:
        run.in_pool -= 1
        if not run.open:
            return
        self.cancel.check()
        try:
            scores = score_with_fallback(run.metric, run.pairs[s:e], self.cancel)
        except MetricBroken as exc:
            run.finish("failed", str(exc))
            return
        run.write(s, e, scores)
        if run.in_pool == 0:
            run.finish()

    def _complete(self, run: MetricRun, s: int, e: int, future: Future[list[ItemScore]]) -> None:
        run.in_pool -= 1
        if not run.open:
            return
        try:
            scores = future.result()
        except MetricBroken as exc:
            run.finish("failed", str(exc))
            return
        except BrokenProcessPool:
            run.in_pool += 1
            self._inflight.appendleft((run, s, e, future))
            raise
        except Exception as exc:  # the worker could not even run the metric
            run.finish("failed", describe(exc))
            return
        run.write(s, e, scores)
        if run.in_pool == 0:
            run.finish()

    def _recover(self) -> None:
        """A worker died (out of memory, killed): score what it had left in this process."""
        self.pool.shutdown(wait=False)
        self.pool.workers = 1  # no more pools in this job
        left = [(run, s, e) for run, s, e, _ in self._inflight] + list(self._queue)
        self._inflight.clear()
        self._queue.clear()
        for run, s, e in left:
            self._score_here(run, s, e)

    def abandon(self) -> None:
        """Stop: cancel what has not started; runs still open are closed by the caller."""
        for _, _, _, future in self._inflight:
            future.cancel()
        self._inflight.clear()
        self._queue.clear()
