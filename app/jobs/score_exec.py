"""Running one metric over many pairs: in this process in adaptively sized chunks, or in a
pool of worker processes for CPU-bound metrics on large runs.

A metric that raises on a batch is retried item by item, so one bad item costs one score
(an error note), not the batch. A metric that fails on every item from the start (a model
that will not load) is stopped early instead of failing 100,000 times.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from meaningbench.metrics.base import ItemScore, Metric, Pair, stable_hash
from meaningbench.runtime import Cancelled, CancelToken, batch_progress

# In this process: chunks sized to take about this long (progress, cancel, commit cadence).
TARGET_CHUNK_S = 0.5
MIN_CHUNK = 8
MAX_CHUNK = 2000
FIRST_CHUNK = 32
# A metric that batches itself (a model) gets slices this large: enough for its length-sorted
# batches to be full and even, while a kill loses at most one slice of uncommitted work.
MODEL_SLICE = 2048
# The pool: chunk size; the run size from which it may pay; the probe scored here first;
# how many single-core seconds of remaining work justify the workers. A worker re-does what
# the caches here already hold (tokenizations, stems), so a metric must be clearly
# CPU-bound to gain: spawned workers must also import and load everything first.
POOL_MODES = ("auto", "always", "never")
POOL_CHUNK = 500
POOL_MIN_ITEMS = 2000
WARM_UP_ITEMS = 32
PROBE_ITEMS = 288
POOL_WORTH_S = 6.0  # spawning the first workers
POOL_WORTH_WARM_S = 2.0  # forking, or workers already spawned

# How many single items must fail like their batch, with nothing scored yet, to give up.
BROKEN_AFTER = 3


class MetricBroken(Exception):
    """The metric fails on everything it is given; the run stops as failed."""


def describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _checked(metric: Metric, pairs: Sequence[Pair], cancel: CancelToken | None) -> list[ItemScore]:
    scores = list(metric.score_batch(pairs, cancel))
    if len(scores) != len(pairs):
        raise RuntimeError(f"{metric.name} returned {len(scores)} scores for {len(pairs)} items")
    return scores


def score_with_fallback(
    metric: Metric,
    pairs: Sequence[Pair],
    cancel: CancelToken | None = None,
    *,
    any_scored: bool = True,
) -> list[ItemScore]:
    """Score a batch; if it raises, score its items one by one and note each failure.

    `any_scored=False` says the run has no score yet: then, if the first few items fail
    alone exactly as the batch did, the metric is broken and `MetricBroken` is raised.
    """
    try:
        return _checked(metric, pairs, cancel)
    except Cancelled:
        raise
    except Exception as batch_exc:
        batch_error = describe(batch_exc)
    out: list[ItemScore] = []
    same = 0
    probe = min(BROKEN_AFTER, len(pairs))
    for i, pair in enumerate(pairs):
        if cancel is not None:
            cancel.check()
        try:
            out.append(_checked(metric, [pair], cancel)[0])
        except Cancelled:
            raise
        except Exception as exc:
            error = describe(exc)
            out.append(ItemScore(None, None, {}, error=error))
            if i < probe and error == batch_error:
                same += 1
        if not any_scored and i == probe - 1 and same == probe and len(pairs) > 1:
            raise MetricBroken(batch_error)
    return out


def _scaled(partial: Callable[[int], None], items: int) -> Callable[[int, int], None]:
    """A metric's (inputs done, inputs) as items of its slice done."""

    def listen(done: int, total: int) -> None:
        partial(items * done // max(1, total))

    return listen


def iterate_in_process(
    metric: Metric,
    pairs: Sequence[Pair],
    cancel: CancelToken,
    *,
    any_scored: bool = False,
    partial: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, int, list[ItemScore]]]:
    """Yield (start, end, scores) chunk by chunk: slices of MODEL_SLICE (or the metric's
    `slice_size()`) for metrics that batch themselves, otherwise chunks sized to about
    TARGET_CHUNK_S.

    `any_scored` says whether the run already has scores (see `score_with_fallback`);
    `partial(n)` hears, inside a slice, how many of its items are about done.
    """
    size = (metric.slice_size() or MODEL_SLICE) if metric.batches_itself else FIRST_CHUNK
    start = 0
    while start < len(pairs):
        cancel.check()
        end = min(len(pairs), start + size)
        began = time.perf_counter()
        n = end - start
        if partial is not None and metric.batches_itself:
            with batch_progress(_scaled(partial, n)):
                scores = score_with_fallback(
                    metric, pairs[start:end], cancel, any_scored=any_scored
                )
        else:
            scores = score_with_fallback(metric, pairs[start:end], cancel, any_scored=any_scored)
        spent = max(time.perf_counter() - began, 1e-4)
        any_scored = any_scored or any(s.error is None for s in scores)
        yield start, end, scores
        if not metric.batches_itself:
            size = int(min(MAX_CHUNK, max(MIN_CHUNK, n * TARGET_CHUNK_S / spent)))
        start = end


# ---- worker processes --------------------------------------------------------------------

_WORKER_METRICS: dict[tuple[type[Metric], str], Metric] = {}


def pool_score(cls: type[Metric], config: dict[str, Any], pairs: list[Pair]) -> list[ItemScore]:
    """Runs in a worker: rebuild the metric once per (class, config), score with fallback."""
    key = (cls, stable_hash(config))
    metric = _WORKER_METRICS.get(key)
    if metric is None:
        metric = _WORKER_METRICS[key] = cls(**config)
    return score_with_fallback(metric, pairs, None, any_scored=True)


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def start_method() -> str:
    """How worker processes start: `fork` when the job runs on the main thread (the command
    line, scripts), `spawn` otherwise.

    A forked worker starts in milliseconds as a copy of this process, with the modules,
    dictionaries (CMUdict, WordNet) and caches the probe just loaded; a spawned one imports
    and loads all of that again (seconds of CPU each). But forking a process whose other
    threads may hold locks (a GUI) can deadlock the child, so the desktop app's jobs, which
    run on worker threads, spawn.
    """
    import multiprocessing
    import threading

    if "fork" in multiprocessing.get_all_start_methods() and (
        threading.current_thread() is threading.main_thread()
    ):
        return "fork"
    return "spawn"


PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PARENT_WATCH_S = 1.0


def die_with_parent(parent_pid: int) -> None:
    """A worker's initializer: end this worker when the scoring process ends, even by
    kill -9, instead of living on with ppid 1 and the study's files open.

    On Linux the kernel sends SIGKILL when the parent dies (PR_SET_PDEATHSIG); a thread
    watching the parent's pid covers other systems. The parent may already be gone by the
    time this runs, so that is checked after asking.
    """
    import signal
    import threading

    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watch below still ends the worker
    if os.getppid() != parent_pid:
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_WATCH_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class WorkerPool:
    """Worker processes for the CPU-bound metrics of one scoring job, started when the first
    metric needs them (a forked pool then holds what that metric's probe loaded here)."""

    def __init__(
        self,
        workers: int,
        method: str | None = None,
        before_fork: Callable[[], None] | None = None,
    ) -> None:
        self.workers = workers
        self.method = method or start_method()
        # Loads, in this process, what the job's metrics need, so forked workers inherit it.
        self.before_fork = before_fork
        self._executor: ProcessPoolExecutor | None = None

    def executor(self) -> ProcessPoolExecutor:
        if self._executor is None:
            import multiprocessing

            if self.method == "fork" and self.before_fork is not None:
                self.before_fork()

            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context(self.method),
                initializer=die_with_parent,
                initargs=(os.getpid(),),
            )
        return self._executor

    def worth_s(self) -> float:
        """Single-core seconds of remaining work from which starting (or using) workers pays."""
        if self.method == "fork" or self._executor is not None:
            return POOL_WORTH_WARM_S
        return POOL_WORTH_S

    def shutdown(self, *, wait: bool = True) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=wait, cancel_futures=True)
            self._executor = None
