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

Request options besides the common metric options: `workers` (worker processes; 1 = none)
`pool`: "auto" (default: a run of at least POOL_MIN_ITEMS items scores a first probe here
and moves to the workers when the rest would take longer than starting them), "always" or
"never"; and `start_method` ("fork" or "spawn"; by default fork on the main thread, spawn
on others, see `score_exec.start_method`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.errors import InputError
from app.jobs.base import JobContext
from app.jobs.metric_specs import PlannedMetric, expand_specs, plan_metric, resolve_model_path
from app.jobs.score_exec import (
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
from app.jobs.score_store import (
    CacheKey,
    CacheState,
    ItemText,
    check_cache,
    create_run,
    finish_run,
    load_items,
    open_existing,
    registered_models,
    score_row_ids,
    write_scores,
)
from app.metrics.base import (
    Availability,
    ItemScore,
    Metric,
    Pair,
    input_hash,
    resolve_references,
)
from app.metrics.registry import metric_classes
from app.runtime import Cancelled
from db.study import Study

STATUSES = ("done", "failed", "cancelled", "unavailable", "cached")


@dataclass
class ScoreRequest:
    study_path: Path
    metrics: list[str]  # metric specs; ["all"] = every available metric
    options: dict[str, Any] = field(
        default_factory=dict
    )  # reference_mode, device, model, batch_size
    item_ids: list[int] | None = None  # None = every item of the study (regular and control)


@dataclass
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


BatchCallback = Callable[[str, list[int]], None]


class _Progress:
    def __init__(self, ctx: JobContext, total: int) -> None:
        self.ctx, self.total, self.done = ctx, total, 0

    def advance(self, n: int, message: str) -> None:
        self.done += n
        self.ctx.progress(self.done, self.total, message)


class _Hashes:
    """Per reference mode: each item's resolved references and input hash, computed once."""

    def __init__(self, items: list[ItemText]) -> None:
        self.items = items
        self._by_mode: dict[str | None, tuple[list[tuple[str, ...]], list[str]]] = {}

    def get(self, mode: str | None) -> tuple[list[tuple[str, ...]], list[str]]:
        if mode not in self._by_mode:
            if mode is None:
                refs: list[tuple[str, ...]] = [()] * len(self.items)
            elif mode == "source":
                refs = [(it.source,) for it in self.items]
            else:
                refs = [resolve_references(it.source, it.references, mode) for it in self.items]
            digests = [
                input_hash(it.source, it.output, r) for it, r in zip(self.items, refs, strict=True)
            ]
            self._by_mode[mode] = (refs, digests)
        return self._by_mode[mode]

    def digests(self) -> dict[str | None, list[str]]:
        return {mode: digests for mode, (_, digests) in self._by_mode.items()}


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building 100,000s of acyclic objects (item
    texts, hashes): its generation scans would otherwise cost as much as the work."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _cache_key(metric: Metric) -> CacheKey:
    mode = metric.reference_mode if "reference_mode" in metric.defaults else None
    return CacheKey(metric.name, metric.config_hash(), mode)


def _plan_all(request: ScoreRequest, study: Study) -> list[PlannedMetric]:
    registered = registered_models(study)
    specs, _ = expand_specs(request.metrics, registered)
    by_name = {r.name: r for r in registered}
    planned = []
    seen: set[tuple[CacheKey, str]] = set()
    for spec in specs:
        try:
            plan = plan_metric(spec, request.options, by_name)
        except InputError as exc:
            if spec.explicit:
                raise
            if spec.model is not None:  # a registered model whose metric is not here
                planned.append(PlannedMetric(spec, None, spec.model, Availability(False, str(exc))))
            continue
        if not spec.explicit and not plan.availability.ok and spec.model is None:
            continue  # `all` means every *available* metric
        if plan.metric is not None:
            same = (_cache_key(plan.metric), plan.label)
            if same in seen:
                continue  # asked for twice
            seen.add(same)
        planned.append(plan)
    return planned


def validate_request(request: ScoreRequest) -> None:
    """Raise InputError for what the job would refuse (unknown metric, option or model),
    without the availability checks, which can be slow: callers check before a progress bar.
    """
    study = open_existing(request.study_path)
    try:
        registered = registered_models(study)
    finally:
        study.close()
    specs, _ = expand_specs(request.metrics, registered)
    by_name = {r.name: r for r in registered}
    for spec in specs:
        if spec.explicit:
            plan_metric(spec, request.options, by_name, check_availability=False)


def score_study(
    request: ScoreRequest, ctx: JobContext, on_batch: BatchCallback | None = None
) -> list[MetricRunSummary]:
    study = open_existing(request.study_path)
    pool = WorkerPool(
        int(request.options.get("workers") or default_workers()),
        request.options.get("start_method"),
    )
    try:
        planned = _plan_all(request, study)
        runnable = [p for p in planned if p.metric is not None and p.availability.ok]
        ctx.progress(0, None, "Checking cached scores", force=True)
        with _collector_paused():
            items = load_items(study, request.item_ids)
            hashes = _Hashes(items)
            keys = [_cache_key(p.metric) for p in runnable if p.metric is not None]
            for key in keys:
                hashes.get(key.mode)
            cache = check_cache(study, keys, items, hashes.digests())
        states = dict(zip(keys, cache, strict=True))
        progress = _Progress(ctx, len(items) * len(runnable))
        pool_mode = str(request.options.get("pool") or "auto")
        if pool_mode not in POOL_MODES:
            raise InputError(f"pool must be one of {', '.join(POOL_MODES)}, not {pool_mode!r}")
        summaries: list[MetricRunSummary] = []
        for plan in planned:
            if plan.metric is None or not plan.availability.ok:
                reason = plan.availability.reason or "unavailable"
                summaries.append(
                    MetricRunSummary(
                        plan.name, plan.label, None, "unavailable", 0, 0, 0, 0.0, reason
                    )
                )
                continue
            if ctx.cancel.cancelled:
                summaries.append(
                    MetricRunSummary(plan.name, plan.label, None, "cancelled", 0, 0, 0, 0.0)
                )
                continue
            summaries.append(
                _run_metric(
                    study,
                    plan,
                    items,
                    hashes,
                    states[_cache_key(plan.metric)],
                    ctx,
                    progress,
                    pool,
                    pool_mode,
                    on_batch,
                )  # fmt: skip
            )
    except BaseException:
        pool.shutdown(wait=False)  # Ctrl+C or an error: do not wait for the workers' chunks
        raise
    else:
        pool.shutdown(wait=not ctx.cancel.cancelled)
        return summaries
    finally:
        study.close()


def _run_metric(
    study: Study,
    plan: PlannedMetric,
    items: list[ItemText],
    hashes: _Hashes,
    state: CacheState,
    ctx: JobContext,
    progress: _Progress,
    pool: WorkerPool,
    pool_mode: str,
    on_batch: BatchCallback | None,
) -> MetricRunSummary:
    metric, label = plan.metric, plan.label
    assert metric is not None
    began = time.perf_counter()
    config_hash = metric.config_hash()
    mode = _cache_key(metric).mode
    refs, digests = hashes.get(mode)
    if state.current is None:
        todo: list[int] = []
    else:
        current = state.current
        todo = [i for i, it in enumerate(items) if it.id not in current]
    cached = len(items) - len(todo)
    progress.advance(cached, label)
    if not todo:
        return MetricRunSummary(
            metric.name, label, state.latest_run_id, "cached", 0, cached, 0,
            time.perf_counter() - began,
        )  # fmt: skip

    old_rows = score_row_ids(study, metric.name, config_hash) if state.latest_run_id else {}
    pairs = [
        Pair(items[i].id, items[i].source, items[i].output, refs[i], items[i].system) for i in todo
    ]
    run_id = create_run(study, metric, label)
    tally = _Tally()

    def consume(chunks: Iterator[tuple[int, int, list[ItemScore]]], offset: int) -> None:
        for start, end, scores in chunks:
            lo, hi = offset + start, offset + end
            ids = [p.item_id for p in pairs[lo:hi]]
            replaced = [row for item_id in ids for row in old_rows.get(item_id, ())]
            write_scores(study, run_id, ids, [digests[i] for i in todo[lo:hi]], scores, replaced)
            tally.add(scores, hi)
            if on_batch is not None:
                on_batch(label, ids)
            progress.advance(hi - lo, label)

    status, error = "done", None
    try:
        start, use_pool = 0, False
        if metric.parallel_safe and pool.workers > 1:
            if pool_mode == "always":
                use_pool = True
            elif pool_mode == "auto" and len(pairs) >= POOL_MIN_ITEMS:
                # Probe here first: a cheap metric is done before workers would be up. The
                # first items pay one-time costs (imports, dictionaries): not timed.
                consume(iterate_in_process(metric, pairs[:WARM_UP_ITEMS], ctx.cancel), 0)
                start = PROBE_ITEMS
                probe_began = time.perf_counter()
                probe = pairs[WARM_UP_ITEMS:start]
                consume(iterate_in_process(metric, probe, ctx.cancel), WARM_UP_ITEMS)
                per_item = (time.perf_counter() - probe_began) / len(probe)
                use_pool = per_item * (len(pairs) - start) >= pool.worth_s()
        if use_pool and start < len(pairs):
            try:
                consume(pool.iterate(metric, pairs[start:], ctx.cancel), start)
                start = len(pairs)
            except BrokenProcessPool:
                start = tally.done_upto  # a worker died (memory, killed): finish here
            finally:
                pool.metric_done()
        if start < len(pairs):
            consume(iterate_in_process(metric, pairs[start:], ctx.cancel), start)
        if tally.scored == 0 and tally.failed > 0:
            status, error = "failed", tally.first_error
    except Cancelled:
        status = "cancelled"
    except MetricBroken as exc:
        status, error = "failed", str(exc)
    except KeyboardInterrupt:
        _finish(study, run_id, "cancelled", tally, began, None, metric)
        raise
    except Exception as exc:
        status, error = "failed", describe(exc)
    _finish(study, run_id, status, tally, began, error, metric)
    return MetricRunSummary(
        metric.name, label, run_id, status, tally.scored, cached, tally.failed,
        time.perf_counter() - began, error,
    )  # fmt: skip


@dataclass
class _Tally:
    scored: int = 0
    failed: int = 0
    done_upto: int = 0
    first_error: str | None = None

    def add(self, scores: list[ItemScore], upto: int) -> None:
        for s in scores:
            if s.error is None:
                self.scored += 1
            else:
                self.failed += 1
                if self.first_error is None:
                    self.first_error = s.error
        self.done_upto = upto


def _finish(
    study: Study,
    run_id: int,
    status: str,
    tally: _Tally,
    began: float,
    error: str | None,
    metric: Metric,
) -> None:
    try:
        device = metric.device()
    except Exception:
        device = None
    finish_run(
        study,
        run_id,
        status=status,
        n_items=tally.scored + tally.failed,
        n_failed=tally.failed,
        elapsed_s=time.perf_counter() - began,
        error=error,
        device=device,
    )


def list_metrics(study_path: Path | str | None = None) -> list[dict[str, Any]]:
    """Every metric with its availability, plus one entry per model registered in the study.

    Keys: name (the spec to run it), label, family, needs_references, needs_model,
    available, reason, description, options (the metric's defaults).
    """
    out: list[dict[str, Any]] = []
    for name, cls in sorted(metric_classes().items()):
        try:
            availability = cls().availability()
        except Exception as exc:
            availability = Availability(False, describe(exc))
        out.append(
            {
                "name": name,
                "label": cls.info.label,
                "family": cls.info.family,
                "needs_references": cls.info.needs_references,
                "needs_model": cls.info.needs_model,
                "available": bool(availability.ok),
                "reason": availability.reason or "",
                "description": cls.info.description,
                "options": dict(cls.defaults),
            }
        )
    if study_path is not None:
        study = open_existing(Path(study_path))
        try:
            refs = registered_models(study)
        finally:
            study.close()
        classes = metric_classes()
        for ref in refs:
            model_cls = classes.get(ref.metric)
            path = resolve_model_path(ref.path)
            if model_cls is None:
                ok, reason = False, f"the metric {ref.metric!r} is not installed"
            elif not Path(path).exists():
                ok, reason = False, f"the model folder {path} is missing"
            else:
                ok, reason = True, ""
            out.append(
                {
                    "name": f"{ref.metric}@{ref.name}",
                    "label": ref.name,
                    "family": "trained",
                    "needs_references": bool(model_cls and model_cls.info.needs_references),
                    "needs_model": True,
                    "available": ok,
                    "reason": reason,
                    "description": f"{ref.metric} with the registered model {ref.name}",
                    "options": {"model": path},
                }
            )
    return out
