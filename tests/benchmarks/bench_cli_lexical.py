"""The lexical metrics as users run them: `meaningbench score --metrics bleu,chrf` as a whole
process, in alternating order with a plain sacrebleu script as a whole process, on CSMD train
(the source as reference); and `--metrics sari` and the three together through the command.

    python -m pytest tests/benchmarks/bench_cli_lexical.py -s -p no:xdist -p no:cacheprovider

The command opens the study, checks the cache, scores and commits every item; the script
reads the TSV with the csv module and calls `sentence_bleu` and `sentence_chrf`. Scores must
equal the script's. SARI has no plain counterpart here: EASSE is not installed, and the
product's SARI is checked against EASSE's published values in tests/metrics/lexical/test_sari.py.
The load average before each run is recorded beside it. MB_BENCH_CLI_ROUNDS sets the rounds
(default 3). Writes tests/benchmarks/results/cli_lexical.json.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.benchmarks.machine import describe_machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "cli_lexical.json"
ROUNDS = int(os.environ.get("MB_BENCH_CLI_ROUNDS", "3"))

SCRIPT = textwrap.dedent(
    """
    import csv, json, sys
    from sacrebleu import sentence_bleu, sentence_chrf
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\\t"))
    out = [[r["original"], r["simplification"],
            sentence_bleu(r["simplification"], [r["original"]]).score,
            sentence_chrf(r["simplification"], [r["original"]]).score] for r in rows]
    json.dump(out, open(sys.argv[2], "w"))
    """
)


def _timed(argv: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - began
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return wall


@pytest.mark.benchmark
def test_lexical_metrics_through_the_command(shared_datasets: Path, tmp_path: Path) -> None:
    from meaningbench.db.study import copy_study

    train = shared_datasets / "csmd" / "train.tsv"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEANINGBENCH_HOME": str(tmp_path / "home")}
    template = tmp_path / "template.mbstudy"
    cli = [sys.executable, "-m", "meaningbench.cli"]
    subprocess.run([*cli, "import", str(template), str(train)], env=env, check=True,
                   capture_output=True)  # fmt: skip
    script = tmp_path / "sacrebleu_script.py"
    script.write_text(SCRIPT)

    sides = ("bleu,chrf", "script", "sari", "bleu,chrf,sari")
    times: dict[str, list[float]] = {side: [] for side in sides}
    loads: dict[str, list[float]] = {side: [] for side in sides}
    study = oracle = None
    for round_ in range(ROUNDS):
        order = sides if round_ % 2 == 0 else sides[::-1]
        for side in order:
            loads[side].append(round(os.getloadavg()[0], 2))
            if side == "script":
                oracle = tmp_path / "oracle.json"
                wall = _timed([sys.executable, str(script), str(train), str(oracle)], env)
            else:
                path = copy_study(template, tmp_path / f"{side}-{round_}.mbstudy")
                if side == "bleu,chrf":
                    study = path
                wall = _timed([*cli, "score", str(path), "--metrics", side, "--json",
                               "--workers", "1"], env)  # fmt: skip
            times[side].append(wall)
            print(f"round {round_} {side}: {wall:.2f} s, load {loads[side][-1]}", flush=True)

    assert study is not None and oracle is not None
    expected = {(s, o): (b, c) for s, o, b, c in json.loads(oracle.read_text())}
    conn = sqlite3.connect(study)
    rows = conn.execute(
        "SELECT i.source, i.output, r.metric, s.value FROM score s "
        "JOIN item i ON i.id = s.item_id JOIN metric_run r ON r.id = s.run_id"
    ).fetchall()
    conn.close()
    diff = max(
        abs(value - expected[(s, o)][0 if metric == "bleu" else 1]) for s, o, metric, value in rows
    )
    ratios = [t / c for t, c in zip(times["script"], times["bleu,chrf"], strict=True)]
    figures = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(),
        "items": len(expected),
        "rounds": ROUNDS,
        "seconds": times,
        "load_average_before_run": loads,
        "bleu_chrf_speedup_over_script_median": statistics.median(ratios),
        "items_per_s_median": {
            side: len(expected) / statistics.median(times[side]) for side in sides
        },
        "max_abs_diff": diff,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    assert len(rows) == 2 * len(expected)
    assert diff <= 1e-9
