"""How close the scoring job comes to the forward passes it cannot avoid.

    python -m pytest tests/benchmarks/bench_forward_floor.py -s -p no:xdist -p no:cacheprovider

In one process, with the model loaded once: the floor is the model's forward passes alone
over the distinct texts of CSMD train (outputs and sources, tokenized beforehand), cut into
the same length-sorted batches the metric uses, nothing written; the scoring phase is the
whole scoring job (`score_study`: study read, cache check, tokenization, forward passes,
matching, alignments, commits) on a fresh copy of the unscored study with empty embedding
caches. The two alternate, MB_BENCH_FLOOR_ROUNDS times (default 3); the figure is the median
of the per-round ratios, with the load average recorded. Target: phase ≤ 1.15 × floor.
Writes tests/benchmarks/results/forward_floor.json.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.benchmarks.machine import describe_machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "forward_floor.json"
ROUNDS = int(os.environ.get("MB_BENCH_FLOOR_ROUNDS", "3"))
TARGET = 1.15


@pytest.mark.benchmark
def test_scoring_phase_against_the_forward_floor(
    shared_datasets: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from meaningbench.db.study import copy_study
    from meaningbench.jobs.scoring import ScoreRequest, score_study
    from meaningbench.metrics.neural.bertscore import BertScoreMetric
    from meaningbench.metrics.neural.support.batching import run_in_batches
    from meaningbench.metrics.neural.support.cache import MEMORY
    from meaningbench.metrics.neural.support.encoding import _forward_layer, token_ids
    from meaningbench.metrics.neural.support.models import prefer_passive_thread_waits
    from meaningbench.runtime import JobContext

    # As the scoring job does before torch is first imported: torch's threads then wait
    # passively on both sides. Loaded first below, the model would leave them spinning
    # between the job's batches, where the Python work of matching and caching needs a core.
    prefer_passive_thread_waits()

    train = shared_datasets / "csmd" / "train.tsv"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    template = tmp_path / "template.mbstudy"
    subprocess.run([sys.executable, "-m", "meaningbench.cli", "import", str(template),
                    str(train)], env=env, check=True, capture_output=True)  # fmt: skip
    with train.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    texts = list(dict.fromkeys([r["simplification"] for r in rows] + [r["original"] for r in rows]))
    metric = BertScoreMetric()
    loaded, layer = metric.loaded(), metric.layer()
    batch_size = int(metric.config["batch_size"])
    ids = token_ids(loaded, texts)
    lengths = [len(i) for i in ids]
    _forward_layer(loaded, layer, ids[:batch_size])  # first-call set-up, not timed

    floor: list[float] = []
    phase: list[float] = []
    loads: list[float] = []
    for round_ in range(ROUNDS):
        loads.append(round(os.getloadavg()[0], 2))
        for side in ("floor", "phase") if round_ % 2 == 0 else ("phase", "floor"):
            if side == "floor":
                began = time.perf_counter()
                run_in_batches(ids, lengths, lambda b: _forward_layer(loaded, layer, b), batch_size)
                floor.append(time.perf_counter() - began)
            else:
                MEMORY.clear()
                monkeypatch.setenv("MEANINGBENCH_HOME", str(tmp_path / f"home{round_}"))
                study = copy_study(template, tmp_path / f"round{round_}.mbstudy")
                began = time.perf_counter()
                [summary] = score_study(ScoreRequest(study, ["bertscore"]), JobContext())
                phase.append(time.perf_counter() - began)
                assert summary.status == "done" and summary.failed == 0
        print(f"round {round_}: floor {floor[-1]:.2f} s, phase {phase[-1]:.2f} s, "
              f"load {loads[-1]}", flush=True)  # fmt: skip

    ratio = statistics.median(p / f for p, f in zip(phase, floor, strict=True))
    figures = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(),
        "pairs_in_file": len(rows),
        "distinct_texts": len(texts),
        "tokens": sum(lengths),
        "batch_size": batch_size,
        "layer": layer,
        "floor_seconds": floor,
        "phase_seconds": phase,
        "load_average_per_round": loads,
        "phase_over_floor_median": ratio,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    assert ratio <= TARGET
