"""The ONNX backend as users run it: `meaningbench score --metrics bertscore` and
`--metrics sbert_cosine` as whole processes (ONNX Runtime, their default on the CPU; and
`[backend=torch]`), against a plain `bert_score` script and a plain sentence-transformers
script, in rotating order.

    python -m pytest tests/benchmarks/bench_cli_onnx.py -s -p no:xdist -p no:cacheprovider

The CSMD train pairs, the default encoder (and BERTScore's default layer), on the CPU. Each
run of the command gets a fresh, unscored copy of the study and a fresh data folder (no
embedding cache on disk) that holds the ONNX export already: the export is made once per
model and layer, by the first run, whose seconds (export included) are recorded apart as
`first_run_seconds`. The scripts load the same model from the same folder and read the same
TSV (bert_score: `BERTScorer.score`; sentence-transformers: `encode` of sources and outputs,
then the cosine of each pair). Wall and CPU time, peak RSS and the 1-minute load average
before each process are recorded as in bench_cli_bertscore.py; the speed-ups are medians of
per-round ratios. MB_BENCH_CLI_ROUNDS sets the rounds (default 3). Targets: BERTScore ≥ 3.0×
the bert_score script, SBERT cosine ≥ 2.0× the sentence-transformers script, scores equal
to theirs within 1e-5. Writes tests/benchmarks/results/cli_onnx.json.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.benchmarks.bench_cli_bertscore import SCRIPT as BERT_SCORE_SCRIPT
from tests.benchmarks.bench_cli_bertscore import _timed
from tests.benchmarks.machine import describe_machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "cli_onnx.json"
ROUNDS = int(os.environ.get("MB_BENCH_CLI_ROUNDS", "3"))

SBERT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import pandas as pd
    import torch
    from sentence_transformers import SentenceTransformer
    model, tsv, out = sys.argv[1], sys.argv[2], sys.argv[3]
    frame = pd.read_csv(tsv, sep="\\t", keep_default_na=False)
    sources = frame["original"].astype(str).tolist()
    outputs = frame["simplification"].astype(str).tolist()
    encoder = SentenceTransformer(model, device="cpu")
    a = encoder.encode(sources, convert_to_tensor=True)
    b = encoder.encode(outputs, convert_to_tensor=True)
    cos = torch.nn.functional.cosine_similarity(a, b).tolist()
    json.dump([[s, o, c] for s, o, c in zip(sources, outputs, cos)], open(out, "w"))
    """
)
# Per metric: the command's two backends and the library script.
SIDES = ("onnx", "torch", "script")


def _scores(study: Path) -> list[tuple[str, str, float]]:
    conn = sqlite3.connect(study)
    rows = conn.execute(
        "SELECT i.source, i.output, s.raw FROM score s JOIN item i ON i.id = s.item_id"
    ).fetchall()
    conn.close()
    return [(str(s), str(o), float(r)) for s, o, r in rows]


def _median_ratio(theirs: list[float], ours: list[float]) -> float:
    return statistics.median(t / o for t, o in zip(theirs, ours, strict=True))


def _home_with_export(base: Path, home: Path) -> dict[str, str]:
    """A fresh data folder holding only the ONNX exports made by the first run (linked)."""
    shutil.copytree(base / "onnx", home / "onnx", copy_function=os.link)
    return {"MEANINGBENCH_HOME": str(home)}


def _run_metric(
    metric: str, template: Path, script_argv: list[str], tmp: Path, env: dict[str, str]
) -> dict[str, object]:
    from meaningbench.db.study import copy_study

    base = tmp / f"{metric}-first-home"
    first = copy_study(template, tmp / f"{metric}-first.mbstudy")
    command = [sys.executable, "-m", "meaningbench.cli", "score"]
    first_run = _timed([*command, str(first), "--metrics", metric, "--json"],
                       {**env, "MEANINGBENCH_HOME": str(base)})  # fmt: skip
    times: dict[str, list[float]] = {s: [] for s in SIDES}
    cpus: dict[str, list[float]] = {s: [] for s in SIDES}
    peaks: dict[str, list[float]] = {s: [] for s in SIDES}
    loads: dict[str, list[float]] = {s: [] for s in SIDES}
    studies: dict[str, Path] = {}
    oracle = tmp / f"{metric}-oracle.json"
    for round_ in range(ROUNDS):
        for side in SIDES[round_ % 3 :] + SIDES[: round_ % 3]:
            loads[side].append(round(os.getloadavg()[0], 2))
            if side == "script":
                wall, cpu, peak = _timed([*script_argv, str(oracle)], env)
            else:
                studies[side] = copy_study(template, tmp / f"{metric}-{side}{round_}.mbstudy")
                spec = metric if side == "onnx" else f"{metric}[backend=torch]"
                home = _home_with_export(base, tmp / f"{metric}-home-{side}{round_}")
                wall, cpu, peak = _timed(
                    [*command, str(studies[side]), "--metrics", spec, "--json"], {**env, **home}
                )
            times[side].append(wall)
            cpus[side].append(cpu)
            peaks[side].append(peak)
            print(f"{metric} round {round_} {side}: {wall:.1f} s, CPU {cpu:.1f} s, "
                  f"{peak:.0f} MB, load {loads[side][-1]}", flush=True)  # fmt: skip
    expected = {(s, o): v for s, o, v in json.loads(oracle.read_text())}
    diffs = {}
    for side, study in studies.items():
        ours = _scores(study)
        assert len(ours) == len(expected)
        diffs[side] = max(abs(raw - expected[(s, o)]) for s, o, raw in ours)
    return {
        "items": len(expected),
        "first_run_seconds_with_export": first_run[0],
        "seconds": times,
        "cpu_seconds": cpus,
        "peak_rss_mb": peaks,
        "load_average_before_run": loads,
        "onnx_speedup_vs_script_median": _median_ratio(times["script"], times["onnx"]),
        "torch_speedup_vs_script_median": _median_ratio(times["script"], times["torch"]),
        "onnx_speedup_vs_torch_median": _median_ratio(times["torch"], times["onnx"]),
        "onnx_cpu_speedup_vs_script_median": _median_ratio(cpus["script"], cpus["onnx"]),
        "max_abs_diff_vs_script": diffs,
    }


@pytest.mark.benchmark
@pytest.mark.timeout(3600)  # 18 whole processes or more on a shared machine
def test_onnx_backend_against_the_library_scripts(shared_datasets: Path, tmp_path: Path) -> None:
    from meaningbench.metrics.neural.bertscore import BertScoreMetric

    train = shared_datasets / "csmd" / "train.tsv"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    template = tmp_path / "template.mbstudy"
    subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", "import", str(template), str(train)],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    metric = BertScoreMetric(backend="torch")
    model, layer = metric.loaded().ref.location, metric.layer()
    bert_script, st_script = tmp_path / "bert_score_script.py", tmp_path / "st_script.py"
    bert_script.write_text(BERT_SCORE_SCRIPT)
    st_script.write_text(SBERT_SCRIPT)
    figures: dict[str, object] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(),
        "rounds": ROUNDS,
        "layer": layer,
    }
    runs = {
        "bertscore": [sys.executable, str(bert_script), model, str(layer), str(train)],
        "sbert_cosine": [sys.executable, str(st_script), model, str(train)],
    }
    for name, argv in runs.items():
        figures[name] = _run_metric(name, template, argv, tmp_path, env)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    for name in runs:
        result = figures[name]
        assert isinstance(result, dict)
        assert max(result["max_abs_diff_vs_script"].values()) <= 1e-5


PARTS = ROOT / "tests" / "benchmarks" / "results" / "cli_onnx_parts.json"
# Runs `meaningbench score` in process with the parts of one run timed, then prints them.
PARTS_DRIVER = textwrap.dedent(
    """
    import atexit, json, sys, time
    began = time.perf_counter()
    spent = {}

    def timed(owner, name, label):
        real = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - start

        setattr(owner, name, wrapper)

    import meaningbench.cli as cli
    start = time.perf_counter()
    cli.build_parser()
    spent["command line parser (the commands' imports)"] = time.perf_counter() - start
    start = time.perf_counter()
    import meaningbench.jobs.scoring as scoring
    spent["importing the scoring job (database, metrics)"] = time.perf_counter() - start
    from meaningbench.metrics.neural import bertscore
    from meaningbench.metrics.neural.support import cache, common, encoding, onnx_encoder
    timed(onnx_encoder.OnnxRunner, "arrays", "forward passes")
    timed(onnx_encoder, "_session", "ONNX Runtime session")
    timed(onnx_encoder, "verified_bytes", "reading the export, its sha256")
    timed(common, "light_model", "tokenizer and config")
    timed(encoding, "_plans", "tokenising, windows")
    timed(bertscore, "greedy_match_many", "greedy matching")
    timed(cache.DiskStore, "put_many", "embedding cache on disk")
    timed(scoring, "score_study", "score_study")
    atexit.register(lambda: print(json.dumps(
        {**spent, "in process": time.perf_counter() - began}), file=sys.stderr))
    sys.exit(cli.main(sys.argv[1:]))
    """
)


@pytest.mark.benchmark
@pytest.mark.timeout(1200)
def test_where_the_time_of_one_bertscore_run_goes(shared_datasets: Path, tmp_path: Path) -> None:
    """The parts of `score --metrics bertscore` with the export in place (ONNX Runtime on
    the CPU, no torch), medians of MB_BENCH_CLI_ROUNDS runs; the wall time of the whole
    process beside them. Writes tests/benchmarks/results/cli_onnx_parts.json."""
    import time

    from meaningbench.db.study import copy_study

    train = shared_datasets / "csmd" / "train.tsv"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    template = tmp_path / "template.mbstudy"
    subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", "import", str(template), str(train)],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    base = tmp_path / "first-home"
    command = ["score", "--metrics", "bertscore", "--json"]
    first = copy_study(template, tmp_path / "first.mbstudy")
    subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", command[0], str(first), *command[1:]],
        env={**env, "MEANINGBENCH_HOME": str(base)}, check=True, capture_output=True,
    )  # fmt: skip
    driver = tmp_path / "parts.py"
    driver.write_text(PARTS_DRIVER)
    runs: list[dict[str, float]] = []
    loads = []
    for round_ in range(ROUNDS):
        study = copy_study(template, tmp_path / f"parts{round_}.mbstudy")
        home = _home_with_export(base, tmp_path / f"parts-home{round_}")
        loads.append(round(os.getloadavg()[0], 2))
        began = time.perf_counter()
        out = subprocess.run(
            [sys.executable, str(driver), command[0], str(study), *command[1:]],
            env={**env, **home}, check=True, capture_output=True, text=True,
        )  # fmt: skip
        wall = time.perf_counter() - began
        parts = json.loads(out.stderr.strip().splitlines()[-1])
        parts["interpreter start and exit"] = wall - parts["in process"]
        parts["whole process"] = wall
        runs.append(parts)
        print(json.dumps(parts), flush=True)
    medians = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    inside = sum(v for k, v in medians.items() if k not in ("score_study", "in process",
                 "whole process", "command line parser (the commands' imports)",
                 "importing the scoring job (database, metrics)", "interpreter start and exit"))  # fmt: skip
    medians["the rest of score_study"] = medians["score_study"] - inside
    figures = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(),
        "rounds": ROUNDS,
        "load_average_before_run": loads,
        "median_seconds": medians,
        "runs": runs,
    }
    PARTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures["median_seconds"], indent=2))
    assert medians["forward passes"] > 0
