"""Dashboard after a batch of scores on a study of 10,000 items and 12 metric runs: the
batch read back by its ids against the whole analysis read again.

    python -m pytest tests/benchmarks/bench_dashboard_scores.py -s -p no:xdist

A synthetic study (10,000 items, 12 metric runs, three raters) is loaded into a
`DashboardState` as the dashboard loads it. Each step commits one batch of scores as the
battery does (a new run of one metric, not timed), then times `DashboardState.apply` of
that batch's `StudyChanges` (the named items' scores read back and set), and the live
statistics computed after it; the first batch of a metric not yet in the study adds its
column. Against it, the whole read the dashboard did after every batch before
(`meaningbench.queries.dashboard_jobs.load_job`: the analysis, its sort orders, the
heatmaps). Both run in this process, on this thread. Writes
tests/benchmarks/results/dashboard_scores.json.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import insert

from meaningbench.db.models import MetricRun, Score
from meaningbench.queries.dashboard_jobs import load_job
from meaningbench.queries.dashboard_state import DashboardState, Redraw
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges
from tests.benchmarks.machine import describe_machine
from tests.ui.dashboard.studies import synthetic_study

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "benchmarks" / ".data" / "dashboard_scores"
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "dashboard_scores.json"
N_ITEMS = 10_000
N_METRICS = 12
N_RATERS = 3
BATCH_SIZES = (100, 1000)
STEPS = 10  # batches per size
FULL_READS = 3


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 2),
        "max": round(max(values), 2),
        "mean": round(statistics.fmean(values), 2),
    }


def _commit_batch(study, metric: str, config_hash: str, ids: list[int], rng) -> None:  # noqa: ANN001
    """A batch as the battery commits it: a run row (the first time) and its scores."""
    with study.session(write=True) as s:
        run = MetricRun(
            metric=metric, config={}, config_hash=config_hash, label=metric, status="done"
        )
        s.add(run)
        s.flush()
        values = rng.uniform(0, 100, len(ids))
        s.execute(
            insert(Score),
            [
                {"run_id": run.id, "item_id": i, "value": float(v), "raw": float(v)}
                for i, v in zip(ids, values, strict=True)
            ],
        )


def _batches(state: DashboardState, study, facts, size: int, rng) -> dict[str, object]:  # noqa: ANN001
    apply_ms: list[float] = []
    live_ms: list[float] = []
    new_column_ms = 0.0
    for step in range(STEPS):
        # The first batch scores a metric the study has no column for; the rest rescore
        # existing columns (the same metric and configuration: the same column).
        metric = f"late{size}" if step == 0 else facts.metric_names[step % N_METRICS]
        config_hash = f"late{size}" if step == 0 else f"h{step % N_METRICS}"
        ids = sorted(int(i) for i in rng.choice(facts.item_ids, size, replace=False))
        _commit_batch(study, metric, config_hash, ids, rng)
        start = time.perf_counter()
        redraw = state.apply(StudyChanges.of(scores={metric: ids}))
        applied = time.perf_counter()
        state.live_table(kendall=False)
        done = time.perf_counter()
        assert not redraw.reload and redraw.scores, redraw
        assert redraw.metrics == (step == 0)
        if step == 0:
            new_column_ms = (applied - start) * 1000
        apply_ms.append((applied - start) * 1000)
        live_ms.append((done - applied) * 1000)
    return {
        "batch_items": size,
        "batches": STEPS,
        "apply_ms": _summary(apply_ms),
        "first_batch_of_a_new_metric_ms": round(new_column_ms, 2),
        "then_live_statistics_ms": _summary(live_ms),
    }


@pytest.mark.benchmark
def test_a_batch_of_scores_against_a_full_reread() -> None:
    shutil.rmtree(DATA, ignore_errors=True)
    DATA.mkdir(parents=True)
    study, facts = synthetic_study(
        DATA / "bench.mbstudy",
        n_items=N_ITEMS,
        n_metrics=N_METRICS,
        n_raters=N_RATERS,
        rated_share=0.7,
        seed=3,
    )
    full_s: list[float] = []
    for _ in range(FULL_READS):
        start = time.perf_counter()
        loaded = load_job(study.path, "meaning")(JobContext())
        full_s.append(time.perf_counter() - start)
    state = DashboardState()
    state.study = study
    state.install(loaded)
    rng = np.random.default_rng(0)
    by_size = [_batches(state, study, facts, size, rng) for size in BATCH_SIZES]
    assert state.apply(StudyChanges(runs=True)) == Redraw()  # the battery's end
    full_ms = statistics.median(full_s) * 1000
    figures = {
        "benchmark": "dashboard: a batch of scores read by its ids vs the whole analysis",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(note="cores shared with other test runs"),
        "items": N_ITEMS,
        "metric_runs": N_METRICS,
        "full_reread_ms": _summary([s * 1000 for s in full_s]),
        "batches": by_size,
        "speedup_p50": {
            str(b["batch_items"]): round(full_ms / b["apply_ms"]["p50"], 1)  # type: ignore[index]
            for b in by_size
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
    study.close()
    shutil.rmtree(DATA, ignore_errors=True)
    for b in by_size:
        assert b["apply_ms"]["p50"] < full_ms  # type: ignore[index]
