"""The scoring job: run a battery of metrics over a study's items, computing only what is
missing or stale, and record each run.

Scores are cached by (metric, config hash, item): a score counts while its `input_hash`
(the hash of the texts the metric saw: source, output, resolved references) matches the
item's texts now. Each metric that has work gets a `metric_run` row; its scores are written
in batches, each batch in its own transaction, and `on_batch(label, item_ids)` is called
after each commit. Cancelling stops after the current batch; what was committed stays and
the run is marked cancelled, so running again resumes. A metric that raises on an item
gives that item an error note and the run goes on; an unavailable metric gives a summary
that says why, and the others still run. Large runs of CPU-bound metrics use a pool of
worker processes; neural metrics run in this process.

Several jobs (processes) may score one study at once. Each metric's run is claimed
atomically before it is scored (meaningbench.jobs.score_claims): a metric another live job is
scoring is left for last, then waited for, and found cached; a run whose process was
killed is marked interrupted and resumed. Notices on the context say so.

Request options besides the common metric options: `workers` (worker processes; 1 = none)
`pool`: "auto" (default: a run of at least POOL_MIN_ITEMS items scores a first probe here
and moves to the workers when the rest would take longer than starting them), "always" or
"never"; and `start_method` ("fork" or "spawn"; by default fork on the main thread, spawn
on others, see `score_exec.start_method`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meaningbench.db.engine import NO_WAIT, WaitPolicy
from meaningbench.db.processes import ProcessId, this_process
from meaningbench.db.runs import close_completed, interrupt_gone_runs
from meaningbench.db.study import Study
from meaningbench.errors import InputError
from meaningbench.jobs.metric_specs import PlannedMetric, expand_specs, plan_metric
from meaningbench.jobs.score_claims import Busy, Claimed, try_claim, wait_for_other
from meaningbench.jobs.score_exec import (
    POOL_MIN_ITEMS,
    POOL_MODES,
    PROBE_ITEMS,
    WARM_UP_ITEMS,
    MetricBroken,
    WorkerPool,
    default_workers,
    describe,
    iterate_in_process,
)
from meaningbench.jobs.score_hashes import (
    Hashes,
    collector_paused,
    metric_cache_key,
    prepare_metric,
)
from meaningbench.jobs.score_runs import BatchCallback, MetricRun, MetricRunSummary, PoolScheduler
from meaningbench.jobs.score_store import (
    CacheKey,
    CacheState,
    ItemText,
    check_cache,
    load_items,
    open_existing,
    registered_models,
    score_row_ids,
    study_options,
)
from meaningbench.metrics.base import (
    Availability,
    Metric,
    Pair,
)
from meaningbench.metrics.cost import CACHED_COST, item_cost
from meaningbench.metrics.names import split_specs
from meaningbench.metrics.neural.support.models import prefer_passive_thread_waits
from meaningbench.metrics.registry import (
    broken_plugins,
)
from meaningbench.runtime import Cancelled, JobContext

# How long a write waits for a lock held by a program that does not name itself (a long
# writer of ours names itself and is waited for while it lives; see meaningbench.db.writers).
UNNAMED_WAIT_S = 120.0


@dataclass
class ScoreRequest:
    study_path: Path
    metrics: list[str]  # metric specs; ["all"] = every available metric
    options: dict[str, Any] = field(
        default_factory=dict
    )  # reference_mode, device, model, batch_size
    item_ids: list[int] | None = None  # None = every item of the study (regular and control)


class _Progress:
    """Items done of all the run's metrics, and the share of its expected work done: each
    item weighs what its metric costs (`meaningbench.metrics.cost`), a cached one little."""

    def __init__(self, ctx: JobContext, total: int, costs: dict[str, float], work: float) -> None:
        self.ctx, self.total, self.done = ctx, total, 0
        self.costs = costs  # label → the cost of one item scored
        self.work_total, self.work_done = work, 0.0

    def _share(self, extra: float = 0.0) -> float | None:
        if self.work_total <= 0:
            return None
        return min(1.0, (self.work_done + extra) / self.work_total)

    def advance(self, n: int, label: str, *, cached: bool = False) -> None:
        self.done += n
        self.work_done += n * (CACHED_COST if cached else self.costs.get(label, 1.0))
        self.ctx.progress(self.done, self.total, label, work=self._share())

    def ahead(self, n: int, label: str) -> None:
        """Show `n` more items as done, inside a slice whose scores are not written yet."""
        extra = n * self.costs.get(label, 1.0)
        self.ctx.progress(self.done + n, self.total, label, work=self._share(extra))


def _expected_work(
    runnable: list[PlannedMetric],
    items: list[ItemText],
    hashes: Hashes,
    states: dict[CacheKey, CacheState],
) -> tuple[dict[str, float], float]:
    """(cost of one item by label, the run's expected cost): each metric's items without a
    current score at its cost, its cached ones at the cost of reading them."""
    costs: dict[str, float] = {}
    work = 0.0
    ids = [it.id for it in items]
    for p in runnable:
        assert p.metric is not None
        cost = item_cost(p.metric)
        costs[p.label] = cost
        current = states[hashes.cache_key(p.metric)].current
        todo = 0 if current is None else sum(1 for i in ids if i not in current)
        work += todo * cost + (len(ids) - todo) * CACHED_COST
    return costs, work


def _options(request: ScoreRequest, study: Study) -> dict[str, Any]:
    """The request's options plus what metrics may learn of the study (its path, its
    language); a metric receives only the options it declares."""
    return {**request.options, **study_options(study), "study": str(request.study_path)}


def _plan_all(request: ScoreRequest, study: Study) -> list[PlannedMetric]:
    registered = registered_models(study)
    specs, _ = expand_specs(request.metrics, registered)
    by_name = {r.name: r for r in registered}
    planned = []
    seen: set[tuple[CacheKey, str]] = set()
    for spec in specs:
        try:
            plan = plan_metric(spec, _options(request, study), by_name)
        except InputError as exc:
            if spec.explicit:
                raise
            if spec.model is not None:  # a registered model whose metric is not here
                planned.append(PlannedMetric(spec, None, spec.model, Availability(False, str(exc))))
            continue
        if not spec.explicit and not plan.availability.ok and spec.model is None:
            continue  # `all` means every *available* metric
        if plan.metric is not None:
            same = (metric_cache_key(plan.metric), plan.label)
            if same in seen:
                continue  # asked for twice
            seen.add(same)
        planned.append(plan)
    return planned


def _say_broken_plugins(request: ScoreRequest, ctx: JobContext) -> None:
    """`all` leaves out the plugins that did not load (an explicit name is refused): say
    which, and why."""
    if not any(s.lower() == "all" for text in request.metrics for s in split_specs(text)):
        return
    for broken in broken_plugins():
        ctx.notice(
            f"plugin metric {broken.name} from {broken.distribution} ({broken.module}) did not "
            f"load: {broken.error}; scoring the others"
        )


def validate_request(request: ScoreRequest) -> None:
    """Raise InputError for what the job would refuse (unknown metric, option or model),
    without the availability checks, which can be slow: callers check before a progress bar.
    """
    study = open_existing(request.study_path)
    try:
        registered = registered_models(study)
        options = _options(request, study)
    finally:
        study.close()
    specs, _ = expand_specs(request.metrics, registered)
    by_name = {r.name: r for r in registered}
    for spec in specs:
        if spec.explicit:
            plan_metric(spec, options, by_name, check_availability=False)


def _pool_mode(request: ScoreRequest) -> str:
    pool_mode = str(request.options.get("pool") or "auto")
    if pool_mode not in POOL_MODES:
        raise InputError(f"pool must be one of {', '.join(POOL_MODES)}, not {pool_mode!r}")
    return pool_mode


def _check_caches(
    study: Study, request: ScoreRequest, runnable: list[PlannedMetric]
) -> tuple[list[ItemText], Hashes, dict[CacheKey, CacheState]]:
    """The items to score, their hashes, and what each runnable metric has cached of them."""
    with collector_paused():
        items = load_items(study, request.item_ids)
        hashes = Hashes(items)
        for p in runnable:
            if p.metric is not None:
                prepare_metric(p.metric, hashes)
        keys = [hashes.cache_key(p.metric) for p in runnable if p.metric is not None]
        for key in keys:
            hashes.get(key.mode)
        cache = check_cache(study, keys, items, hashes.digests())
    return items, hashes, dict(zip(keys, cache, strict=True))


def _summarise_unavailable(
    planned: list[PlannedMetric],
) -> tuple[list[MetricRun | MetricRunSummary | None], deque[int]]:
    """A summary for each metric that cannot run, and the indexes of those that can."""
    results: list[MetricRun | MetricRunSummary | None] = [None] * len(planned)
    todo: deque[int] = deque()
    for i, plan in enumerate(planned):
        if plan.metric is None or not plan.availability.ok:
            reason = plan.availability.reason or "unavailable"
            fix = plan.availability.fix
            if fix and fix not in reason:
                reason = f"{reason}; to use it: {fix}"
            results[i] = MetricRunSummary(
                plan.name, plan.label, None, "unavailable", 0, 0, 0, 0.0, reason
            )
        else:
            todo.append(i)
    return results, todo


def _mark_cancelled(
    planned: list[PlannedMetric],
    results: list[MetricRun | MetricRunSummary | None],
    indexes: Iterable[int],
) -> None:
    for i in indexes:
        plan = planned[i]
        results[i] = MetricRunSummary(plan.name, plan.label, None, "cancelled", 0, 0, 0, 0.0)


def _announce_busy(
    ctx: JobContext,
    label: str,
    busy: Busy,
    i: int,
    todo: deque[int],
    elsewhere: dict[int, Busy],
    announced: set[int],
) -> None:
    """Say once that another process scores metric `i`; a wait with nothing else to do
    is remembered as announced."""
    if i in elsewhere:
        return
    if todo:
        ctx.notice(f"{label}: {busy.describe()} is scoring it; scoring the other metrics first")
    else:
        ctx.notice(f"waiting for {label}: {busy.describe()} is scoring it")
        announced.add(i)


def _finish_all(
    results: list[MetricRun | MetricRunSummary | None],
    ctx: JobContext,
    scheduler: PoolScheduler,
) -> list[MetricRunSummary]:
    """Let the workers finish (unless cancelled), then close every run."""
    if not ctx.cancel.cancelled:
        with suppress(Cancelled):
            scheduler.drain()
    scheduler.abandon()
    final = "cancelled" if ctx.cancel.cancelled else None
    return [r.finish(final) if isinstance(r, MetricRun) else r for r in results if r is not None]


def _open_for_scoring(request: ScoreRequest, ctx: JobContext) -> Study:
    study = open_existing(request.study_path)
    # Writes that wait for another process's lock say so, and stop when cancelled.
    study.set_wait_policy(
        WaitPolicy(notice=ctx.notice, check=ctx.cancel.check, unknown_limit_s=UNNAMED_WAIT_S)
    )
    return study


def _metrics_with_work(
    runnable: list[PlannedMetric], hashes: Hashes, states: dict[CacheKey, CacheState]
) -> Iterator[Metric]:
    """The metrics workers may run: parallel-safe ones with items left to score."""
    return (
        p.metric
        for p in runnable
        if p.metric is not None
        and p.metric.parallel_safe
        and states[hashes.cache_key(p.metric)].current is not None  # it has work to do
    )


def score_study(
    request: ScoreRequest, ctx: JobContext, on_batch: BatchCallback | None = None
) -> list[MetricRunSummary]:
    prefer_passive_thread_waits()
    study = _open_for_scoring(request, ctx)
    me = this_process()
    pool = WorkerPool(
        int(request.options.get("workers") or default_workers()),
        request.options.get("start_method"),
    )
    scheduler = PoolScheduler(pool, ctx.cancel)
    runs: list[MetricRun] = []
    try:
        pool_mode = _pool_mode(request)
        # Runs left `running` by a process that was killed are closed as interrupted
        # first (and resumed below, where their metric is asked for).
        interrupt_gone_runs(study)
        planned = _plan_all(request, study)
        _say_broken_plugins(request, ctx)
        runnable = [p for p in planned if p.metric is not None and p.availability.ok]
        ctx.progress(0, None, "Checking cached scores", force=True)
        items, hashes, states = _check_caches(study, request, runnable)
        costs, work = _expected_work(runnable, items, hashes, states)
        progress = _Progress(ctx, len(items) * len(runnable), costs, work)
        pool.before_fork = lambda: _warm_up(_metrics_with_work(runnable, hashes, states))

        def report(label: str, ids: list[int], n: int) -> None:
            if on_batch is not None:
                on_batch(label, ids)
            progress.advance(n, label)

        results, todo = _summarise_unavailable(planned)
        whole_study = request.item_ids is None
        # Metrics another process is scoring now: left for last, then waited for.
        elsewhere: dict[int, Busy] = {}
        announced: set[int] = set()  # those whose wait was announced
        while todo or elsewhere:
            if ctx.cancel.cancelled:
                _mark_cancelled(planned, results, [*todo, *elsewhere])
                break
            if todo:
                i = todo.popleft()
            else:
                labels = {i: planned[i].label for i in elsewhere}
                ready = wait_for_other(study, elsewhere, labels, ctx, scheduler.pump, announced, me)
                if ready is None:
                    continue
                i = ready
            plan = planned[i]
            started = _start_run(
                study, plan, items, hashes, states, progress, report, me, whole_study
            )
            if isinstance(started, Busy):
                _announce_busy(ctx, plan.label, started, i, todo, elsewhere, announced)
                elsewhere[i] = started
                continue
            elsewhere.pop(i, None)
            results[i] = started
            if isinstance(started, MetricRun):
                runs.append(started)
                _score(started, ctx, pool, scheduler, pool_mode, progress)
        summaries = _finish_all(results, ctx, scheduler)
    except BaseException:
        # An error or Ctrl+C: close what is open as cancelled, without waiting for workers
        # or for another process's lock. A run that cannot be closed now stays `running`
        # under this process, and counts as interrupted (and is resumed) once it is gone.
        study.set_wait_policy(NO_WAIT)
        scheduler.abandon()
        pool.shutdown(wait=False)
        for run in runs:
            with suppress(Exception):
                run.finish("cancelled")
        raise
    else:
        pool.shutdown(wait=not ctx.cancel.cancelled)
        return summaries
    finally:
        study.close()


def _warm_up(metrics: Iterable[Metric]) -> None:
    for metric in metrics:
        try:
            metric.warm_up()
        except Exception:  # scoring will report it, item by item
            continue


def _start_run(
    study: Study,
    plan: PlannedMetric,
    items: list[ItemText],
    hashes: Hashes,
    states: dict[CacheKey, CacheState],
    progress: _Progress,
    report: Callable[[str, list[int], int], None],
    me: ProcessId,
    whole_study: bool,
) -> MetricRun | MetricRunSummary | Busy:
    """Claim the run of one metric over the items it has no current score for.

    A summary when every score is cached, `Busy` while another process scores it. The
    claim needs the runs of its (metric, config) to be as the cache check saw them; when
    another process changed them meanwhile, that metric's cache is checked again. With
    every item of the study scored (`whole_study`), an interrupted run has nothing left
    to do (it was killed after its last batch): it is closed as done.
    """
    metric, label = plan.metric, plan.label
    assert metric is not None
    began = time.perf_counter()
    key = hashes.cache_key(metric)
    refs, digests = hashes.get(key.mode)
    while True:
        state = states[key]
        if state.current is None:
            todo: list[int] = []
        else:
            current = state.current
            todo = [i for i, it in enumerate(items) if it.id not in current]
        if not todo:
            interrupted = [run_id for run_id, status in state.runs if status == "interrupted"]
            if interrupted and whole_study:
                close_completed(study, interrupted)
            progress.advance(len(items), label, cached=True)
            return MetricRunSummary(
                metric.name, label, state.latest_run_id, "cached", 0, len(items), 0,
                time.perf_counter() - began,
            )  # fmt: skip
        claim = try_claim(study, key, state.runs, metric, label, me)
        if isinstance(claim, Claimed):
            break
        if isinstance(claim, Busy):
            return claim
        states[key] = check_cache(study, [key], items, {key.mode: digests})[0]
    cached = len(items) - len(todo)
    progress.advance(cached, label, cached=True)
    config_hash = metric.config_hash()
    old_rows = score_row_ids(study, metric.name, config_hash) if state.latest_run_id else {}
    pairs = [
        Pair(items[i].id, items[i].source, items[i].output, refs[i], items[i].system) for i in todo
    ]
    return MetricRun(
        study, metric, label, pairs, [digests[i] for i in todo], old_rows, cached, report,
        claim.run_id, claim.items_before, claim.failed_before, claim.elapsed_before, began=began,
    )  # fmt: skip


def _score(
    run: MetricRun,
    ctx: JobContext,
    pool: WorkerPool,
    scheduler: PoolScheduler,
    pool_mode: str,
    progress: _Progress,
) -> None:
    """Score a run here, or probe it here and hand the rest to the workers.

    Between chunks the scheduler writes what the workers sent back, so they keep working
    while this process scores. A pooled run is finished by the scheduler.
    """
    metric, pairs = run.metric, run.pairs

    def here(start: int, end: int) -> None:
        for s, e, scores in iterate_in_process(
            metric,
            pairs[start:end],
            ctx.cancel,
            any_scored=run.tally.scored > 0,
            partial=lambda n: progress.ahead(n, run.label),
        ):
            run.write(start + s, start + e, scores)
            scheduler.pump()

    try:
        start = 0
        if metric.parallel_safe and pool.workers > 1 and pool_mode != "never":
            if pool_mode == "always":
                scheduler.add(run, 0)
                return
            if len(pairs) >= POOL_MIN_ITEMS:
                # Probe here first: a cheap metric is done before workers would be up. The
                # first items pay one-time costs (imports, dictionaries): not timed.
                here(0, WARM_UP_ITEMS)
                probe_began = time.perf_counter()
                here(WARM_UP_ITEMS, PROBE_ITEMS)
                per_item = (time.perf_counter() - probe_began) / (PROBE_ITEMS - WARM_UP_ITEMS)
                start = PROBE_ITEMS
                if per_item * (len(pairs) - start) >= pool.worth_s():
                    scheduler.add(run, start)
                    return
        here(start, len(pairs))
        run.finish()
    except Cancelled:
        run.finish("cancelled")
    except MetricBroken as exc:
        run.finish("failed", str(exc))
    except Exception as exc:
        if ctx.cancel.cancelled:
            # Ctrl+C lands anywhere: inside SQLAlchemy's commit, a `finally: assert` turns
            # the KeyboardInterrupt into an AssertionError. After a cancel it is the cancel.
            run.finish("cancelled")
            return
        run.finish("failed", describe(exc))
