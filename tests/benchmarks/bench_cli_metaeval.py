"""Which metric the WMT25 way as users run it: `meaningbench metaeval STUDY --preset wmt25`,
a whole process reading a study file of 10,000 outputs (20 systems × 500 sources), one
rating each, and 30 metric runs (goal ≤ 30 s, as for the engine's ranking alone in
bench_metaeval_wmt25.py).

    python -m pytest tests/benchmarks/bench_cli_metaeval.py -s -p no:xdist

The study is built once, untimed: the ratings come in through `meaningbench import` (a long
file), and the 30 runs through the scoring job (`score_study`, the `score` command's path)
with 30 registered metrics that give the synthetic scores of synthetic_metaeval.py (the same
latent quality with growing noise, every third rounded). The command is then timed as a
whole process, in alternating order with a process that ranks the same arrays with the
engine's `rank_metrics` alone (what bench_metaeval_wmt25.py times), MB_BENCH_CLI_ROUNDS
rounds (default 2); the difference is the command's study read, its table and its text.
Both must give the same clusters. Writes
tests/benchmarks/results/cli_metaeval.json with the load average before each run.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.benchmarks.machine import describe_machine
from tests.benchmarks.synthetic_metaeval import array_lines

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "cli_metaeval.json"
ROUNDS = int(os.environ.get("MB_BENCH_CLI_ROUNDS", "2"))
SYSTEMS, SOURCES, METRICS = 20, 500, 30
GOAL_S = 30.0

# The arrays of synthetic_metaeval, with metric names and texts that name their row.
ARRAYS = (
    "import numpy as np\n"
    + array_lines(SYSTEMS, SOURCES, METRICS)
    + """
names = [f"synthetic{k:02d}" for k in range(M)]
def source_text(i): return f"Source sentence number {src[i]} of the benchmark."
def output_text(i): return f"Output {i} of system {sys_[i]:02d}."
"""
)

SCORE = ARRAYS + textwrap.dedent(
    """
    import sys
    from typing import ClassVar
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.metrics.base import ItemScore, Metric, MetricInfo
    from meaningbench.metrics.registry import metric_classes, register
    from meaningbench.runtime import JobContext

    row = {output_text(i): i for i in range(S * J)}

    def synthetic(k):
        class Synthetic(Metric):
            info: ClassVar[MetricInfo] = MetricInfo(names[k], names[k], "lexical", "synthetic")
            def score_batch(self, pairs, cancel=None):
                # A linear map onto the 0-100 scale keeps every order and tie of x.
                return [ItemScore(50 + 10 * float(x[row[p.output], k]), float(x[row[p.output], k]))
                        for p in pairs]
        return Synthetic

    metric_classes()
    for k in range(M):
        register(synthetic(k))
    score_study(ScoreRequest(sys.argv[1], names, {"pool": "never"}), JobContext())
    """
)


def _long_file(path: Path) -> None:
    namespace: dict = {}
    exec(ARRAYS, namespace)  # noqa: S102 - the benchmark's own text, shared with the child
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["source", "output", "system", "annotator", "dimension", "rating"])
        for i in range(SYSTEMS * SOURCES):
            out.writerow(
                [
                    namespace["source_text"](i),
                    namespace["output_text"](i),
                    f"sys{namespace['sys_'][i]:02d}",
                    "rater1",
                    "meaning",
                    int(namespace["human"][i]),
                ]
            )


def _study(folder: Path) -> Path:
    study, ratings = folder / "wmt25-shape.mbstudy", folder / "ratings.csv"
    _long_file(ratings)
    cli = [sys.executable, "-m", "meaningbench.cli"]
    subprocess.run([*cli, "import", str(study), str(ratings)], check=True, cwd=ROOT)
    subprocess.run([sys.executable, "-c", SCORE, str(study)], check=True, cwd=ROOT)
    return study


ENGINE = ARRAYS + textwrap.dedent(
    """
    import json
    from meaningbench.analysis.metaeval import MetaEvalData
    from meaningbench.analysis.metaeval_presets import WMT25
    from meaningbench.analysis.metaeval_significance import rank_metrics
    from meaningbench.core.keys import source_group_key
    # The study's values and labels, bit for bit: SPA's source flips follow the sources'
    # order, and a p-value at the edge of α can fall either side of it under other draws.
    data = MetaEvalData(human, 50 + 10 * x, names,
                        np.array([f"sys{k:02d}" for k in sys_], object),
                        np.array([source_group_key(source_text(i)) for i in range(S * J)], object))
    print(json.dumps([rank_metrics(data, t.measure, group_by=t.group_by, test=t.test,
                                   resamples=1000, seed=0, intervals=WMT25.intervals,
                                   early_stop=WMT25.early_stop).clusters
                      for t in WMT25.tasks]))
    """
)


def _timed(argv: list[str]) -> tuple[float, str]:
    began = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - began
    assert done.returncode == 0, done.stderr[-2000:]
    return wall, done.stdout


@pytest.mark.benchmark
@pytest.mark.timeout(1800)
def test_wmt25_preset_through_the_command(tmp_path: Path) -> None:
    study = _study(tmp_path)
    sides = {
        "command": [sys.executable, "-m", "meaningbench.cli", "metaeval", str(study),
                    "--preset", "wmt25", "--json"],
        "engine alone": [sys.executable, "-c", ENGINE],
    }  # fmt: skip
    times: dict[str, list[float]] = {s: [] for s in sides}
    loads: dict[str, list[float]] = {s: [] for s in sides}
    outputs: dict[str, str] = {}
    for round_ in range(ROUNDS):
        order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
        for side in order:
            loads[side].append(round(os.getloadavg()[0], 2))
            wall, outputs[side] = _timed(sides[side])
            times[side].append(round(wall, 2))
            print(f"round {round_} {side}: {wall:.1f} s, load {loads[side][-1]}", flush=True)
    got = json.loads(outputs["command"])
    clusters = [{r["metric"]: r["cluster"] for r in k["ranking"]} for k in got["rankings"]]
    assert clusters == json.loads(outputs["engine alone"])
    assert got["n_outputs"] == SYSTEMS * SOURCES
    figures = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(),
        "metrics": METRICS,
        "outputs": SYSTEMS * SOURCES,
        "systems": SYSTEMS,
        "sources": SOURCES,
        "study_file_mb": round(study.stat().st_size / 1e6, 1),
        "rounds": ROUNDS,
        "seconds": times,
        "median_seconds": {s: statistics.median(t) for s, t in times.items()},
        "load_average_before_run": loads,
        "goal_s": GOAL_S,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
    assert max(figures["median_seconds"].values()) <= 900.0  # regression bound, not the goal
