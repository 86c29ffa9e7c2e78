"""Streaming memory of `meaningbench score` as a whole process on a 100,000-item study.

    python -m pytest tests/benchmarks/bench_cli_memory.py -s -p no:xdist -p no:cacheprovider

The study is synthetic: sources and outputs of 12 to 40 words drawn from the CSMD train
sentences' vocabulary, 4 outputs per source, imported with `meaningbench import`. The
command's resident memory is read from /proc every 0.2 s while it scores; the figures are
the peak, the peak of each half of the run (flat means the second half's peak is not above
the first's by more than a few per cent) and the kernel's own peak (`os.wait4`).
MB_BENCH_MEM_METRICS picks the metrics (default `bleu`, a lexical metric: 100,000 items of
BERTScore take about 17 minutes on 2 idle cores); MB_BENCH_MEM_ITEMS the item count.
Target: peak RSS ≤ 1.2 GB. Writes tests/benchmarks/results/cli_memory.json.
"""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.benchmarks.machine import describe_machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "cli_memory.json"
ITEMS = int(os.environ.get("MB_BENCH_MEM_ITEMS", "100000"))
METRICS = os.environ.get("MB_BENCH_MEM_METRICS", "bleu")
OUTPUTS_PER_SOURCE = 4
SAMPLE_S = 0.2
TARGET_MB = 1200.0


def _synthetic_tsv(train: Path, path: Path) -> None:
    rng = random.Random(15)
    with train.open(newline="", encoding="utf-8") as f:
        words = sorted({w for row in csv.DictReader(f, delimiter="\t") for w in
                        (row["original"] + " " + row["simplification"]).split()})  # fmt: skip
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, delimiter="\t")
        out.writerow(["source", "output", "system"])
        for n in range(ITEMS // OUTPUTS_PER_SOURCE):
            source = " ".join(rng.choices(words, k=rng.randint(12, 40)))
            for k in range(OUTPUTS_PER_SOURCE):
                kept = [w for w in source.split() if rng.random() < 0.7]
                output = " ".join(kept + rng.choices(words, k=rng.randint(0, 4)))
                out.writerow([f"{source} ({n})", output or "Empty.", f"sys{k}"])


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


@pytest.mark.benchmark
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_score_command_memory_on_a_large_study(shared_datasets: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "MEANINGBENCH_HOME": str(tmp_path / "home")}  # fmt: skip
    data = tmp_path / "large.tsv"
    _synthetic_tsv(shared_datasets / "csmd" / "train.tsv", data)
    study = tmp_path / "large.mbstudy"
    cli = [sys.executable, "-m", "meaningbench.cli"]
    began = time.perf_counter()
    subprocess.run([*cli, "import", str(study), str(data)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    import_s = time.perf_counter() - began

    load = round(os.getloadavg()[0], 2)
    began = time.perf_counter()
    proc = subprocess.Popen(
        [*cli, "score", str(study), "--metrics", METRICS, "--json", "--workers", "1"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    trace: list[tuple[float, float]] = []
    while proc.poll() is None:
        rss = _rss_mb(proc.pid)
        if rss is not None:
            trace.append((round(time.perf_counter() - began, 2), round(rss, 1)))
        time.sleep(SAMPLE_S)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - began
    assert proc.returncode == 0, stderr.decode(errors="replace")[-2000:]
    runs = json.loads(stdout)["runs"]
    scored = sum(r["scored"] for r in runs)
    half = wall / 2
    first = max((r for t, r in trace if t <= half), default=0.0)
    second = max((r for t, r in trace if t > half), default=0.0)
    peak = max(r for _, r in trace)
    figures = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(load_average_before_score=load),
        "items": ITEMS,
        "metrics": METRICS,
        "import_seconds": import_s,
        "score_seconds": wall,
        "scored": scored,
        "items_per_s": scored / wall,
        "peak_rss_mb": peak,
        "peak_rss_first_half_mb": first,
        "peak_rss_second_half_mb": second,
        "rss_trace_every_10th_sample": trace[::10],
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps({k: v for k, v in figures.items() if "trace" not in k}, indent=2))
    assert scored == ITEMS * len(METRICS.split(","))
    assert peak <= TARGET_MB
