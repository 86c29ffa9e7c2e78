"""Analysis speed: every statistic of 30 runs × 100,000 items with 1,000 bootstrap resamples
(target ≤ 2 s), and a live refresh after one new rating on a 10,000-item study (≤ 50 ms).

    python -m pytest tests/benchmarks/bench_analysis.py -s -p no:xdist

The full run times `correlate_many` on arrays (the study file read is not part of it):
Pearson, Spearman, Kendall with p-values, R², RMSE, system level, and the shared bootstrap
of the Pearson and Spearman intervals. The live refresh is what the dashboard does after a
submission: the rating enters the in-memory rating arrays, then every run's point
statistics (Kendall included, no bootstrap) are recomputed; half of the ratings are first
ratings of unrated items (the item set changes), half are extra ratings of rated ones.
Writes tests/benchmarks/results/analysis.json. Timings include whatever else runs on the
machine: wall and CPU seconds are both recorded, with the load average.
"""

from __future__ import annotations

import json
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from meaningbench.analysis.agreement import agreement
from meaningbench.analysis.correlation import correlate_many
from meaningbench.analysis.data import DimensionInfo, StudyData
from meaningbench.analysis.human import RatingSet
from meaningbench.analysis.live import StudyAnalysis
from meaningbench.analysis.parallel import n_workers
from tests.benchmarks.machine import describe_machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "analysis.json"
TARGET_FULL_S = 2.0
TARGET_REFRESH_MS = 50.0


def _metrics(truth: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    n = truth.size
    x = truth[:, None] * rng.uniform(0.2, 1.0, m) + rng.normal(0, 20, (n, m))
    x = np.clip(x, 0, 100)
    x[:, ::3] = np.round(x[:, ::3])  # some metrics have heavy ties, as BLEU on short texts
    x[rng.random((n, m)) < 0.002] = np.nan  # a few failed items
    return x


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))]


def _write(section: str, figures: dict[str, object]) -> None:
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[section] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(analysis_threads=n_workers(), numpy=np.__version__),
        **figures,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(data[section], indent=2))


def test_all_statistics_30_runs_100k_items_1000_resamples() -> None:
    rng = np.random.default_rng(0)
    n, m = 100_000, 30
    truth = rng.uniform(0, 100, n)
    y = np.round(truth + rng.normal(0, 12, n))
    x = _metrics(truth, m, rng)
    systems = rng.integers(0, 20, n)
    names = [f"metric{j}" for j in range(m)]
    walls, cpus = [], []
    for _ in range(3):
        w0, c0 = time.perf_counter(), time.process_time()
        table = correlate_many(x, y, names, n_boot=1000, seed=0, systems=systems)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    r = table.results["metric0"]
    assert r.pearson_ci[0] < r.pearson < r.pearson_ci[1]
    assert np.isfinite(r.kendall) and np.isfinite(r.system_pearson)

    w0 = time.perf_counter()
    correlate_many(x, y, names, n_boot=0, systems=systems)
    point_s = time.perf_counter() - w0
    groups = np.arange(n) // 4
    w0 = time.perf_counter()
    correlate_many(x, y, names, n_boot=1000, seed=0, groups=groups, kendall=False)
    groups_s = time.perf_counter() - w0
    figures = {
        "items": n,
        "runs": m,
        "resamples": 1000,
        "spearman_ci_method": table.spearman_ci_method,
        "wall_s": {"min": round(min(walls), 3), "median": round(statistics.median(walls), 3)},
        "cpu_s": {"min": round(min(cpus), 3), "median": round(statistics.median(cpus), 3)},
        "point_statistics_only_s": round(point_s, 3),
        "source_group_bootstrap_no_kendall_s": round(groups_s, 3),
        "target_s": TARGET_FULL_S,
    }
    _write("full_30x100k_1000", figures)
    assert min(walls) <= TARGET_FULL_S


def _live_study(n: int, m: int, rng: np.random.Generator) -> StudyAnalysis:
    truth = rng.uniform(0, 100, n)
    ids = np.arange(1, n + 1)
    frames = []
    for a in range(3):
        rated = rng.random(n) < 0.9
        values = np.clip(np.round(truth + rng.normal(0, 15, n)), 0, 100)
        frames.append(
            pd.DataFrame(
                {
                    "item_id": ids[rated],
                    "annotator": f"rater{a}",
                    "annotator_kind": "named",
                    "value": values[rated],
                }
            )
        )
    ratings = RatingSet.from_frame(pd.concat(frames), ids)
    data = StudyData(
        items=pd.DataFrame({"item_id": ids}),
        item_ids=ids,
        metric_names=[f"metric{j}" for j in range(m)],
        metric_values=_metrics(truth, m, rng),
        ratings=ratings,
        dimension=DimensionInfo("meaning", "continuous", 0.0, 100.0),
        systems=rng.integers(0, 10, n),
        groups=np.arange(n) // 3,
    )
    return StudyAnalysis(data)


def test_live_refresh_after_one_rating_10k_items() -> None:
    rng = np.random.default_rng(1)
    n, m, steps = 10_000, 30, 200
    live = _live_study(n, m, rng)
    live.correlations()  # warm: sort orders and ranks exist once the dashboard is open
    unrated = np.flatnonzero(~np.isfinite(live.data.ratings.scores().raw))
    figures: dict[str, object] = {"items": n, "runs": m, "ratings_before": 0, "steps": steps}
    figures["ratings_before"] = int(live.data.ratings.arrays()[0].size)
    for z, kendall in ((False, True), (True, True), (False, False)):
        times, cpu = [], []
        for k in range(steps):
            first = k % 2 == 0 and k // 2 < unrated.size
            item = int(live.data.item_ids[unrated[k // 2]]) if first else int(rng.integers(1, n))
            w0, c0 = time.perf_counter(), time.process_time()
            live.set_rating(item, "new-rater", float(rng.uniform(0, 100)))
            table = live.correlations(z=z, kendall=kendall)
            times.append((time.perf_counter() - w0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        assert np.isfinite(table.results["metric1"].kendall) == kendall
        key = ("z_scores" if z else "raw_means") + ("" if kendall else "_without_kendall")
        figures[key] = {
            "wall_ms": {"p50": round(_pct(times, 0.5), 2), "p95": round(_pct(times, 0.95), 2)},
            "cpu_ms": {"p50": round(_pct(cpu, 0.5), 2), "p95": round(_pct(cpu, 0.95), 2)},
        }
    agree = []
    for _ in range(20):
        w0 = time.perf_counter()
        items, raters, values = live.data.ratings.arrays(human_only=True)
        agreement(items, raters, values, n_splits=20)
        agree.append((time.perf_counter() - w0) * 1000)
    figures["agreement_ms_p50"] = round(_pct(agree, 0.5), 2)
    figures["target_ms"] = TARGET_REFRESH_MS
    _write("live_refresh_10k", figures)
    assert figures["raw_means"]["wall_ms"]["p50"] <= TARGET_REFRESH_MS  # type: ignore[index]
