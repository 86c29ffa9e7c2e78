"""The experiment behind `backend=onnx`: BERTScore's forward passes through ONNX Runtime
instead of torch, on CPU, without the scoring job around them (bench_cli_onnx.py measures
the command as users run it).

    python -m pytest tests/benchmarks/bench_onnx_bertscore.py -s -p no:xdist -p no:cacheprovider

Needs onnxruntime and onnx (skipped otherwise). The encoder, cut after the metric's layer,
is exported once as the product exports it (cached under the data folder, keyed by the
model's fingerprint and the layer). Then two whole processes do the
same work, in alternating order, MB_BENCH_ONNX_ROUNDS times (default 3): read CSMD train,
tokenize the distinct texts as the metric does, run the forward passes in the metric's
length-sorted batches (torch: the metric's own code; ONNX: an InferenceSession, without
importing transformers' model code), match every pair with the metric's matching, and
write the F1 scores. Each process also reports its forward-pass seconds. Figures: the
whole-process and forward-pass speed-ups (medians of per-round ratios) and the largest F1
difference between the two. The bar for adding `bertscore[backend=onnx]` to the product:
within 1e-5 of torch and ≥ 1.25× faster on the command's path.
Writes tests/benchmarks/results/onnx_bertscore.json.
"""

from __future__ import annotations

import importlib.util
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

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "onnx_bertscore.json"
ROUNDS = int(os.environ.get("MB_BENCH_ONNX_ROUNDS", "3"))
TOLERANCE = 1e-5
NEEDED_SPEEDUP = 1.25

PROCESS = textwrap.dedent(
    """
    import csv, json, sys, time, types
    from meaningbench.metrics.neural.support.models import prefer_passive_thread_waits
    prefer_passive_thread_waits()
    backend, onnx_path, tsv, out = sys.argv[1:5]
    with open(tsv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\\t"))
    pairs = [(r["simplification"], r["original"]) for r in rows]
    texts = list(dict.fromkeys([o for o, _ in pairs] + [s for _, s in pairs]))
    import torch
    from meaningbench.metrics.neural.support.batching import run_in_batches
    from meaningbench.metrics.neural.bertscore import BertScoreMetric
    from meaningbench.metrics.neural.support.cache import Embedding
    from meaningbench.metrics.neural.support.encoding import _forward_layer, special_ids, token_ids
    from meaningbench.metrics.neural.support.greedy import greedy_match_many, weights
    metric = BertScoreMetric()
    layer, batch_size = metric.layer(), int(metric.config["batch_size"])
    if backend == "torch":
        loaded = BertScoreMetric(backend="torch").loaded()
        def forward(batch):
            return _forward_layer(loaded, layer, batch)
    else:
        import numpy as np
        import onnxruntime as ort
        from transformers import AutoTokenizer
        from meaningbench.metrics.neural.support.models import resolve_model
        tok = AutoTokenizer.from_pretrained(resolve_model(None).location, local_files_only=True)
        loaded = types.SimpleNamespace(tokenizer=tok, max_length=512)
        session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        pad = tok.pad_token_id or 0
        def forward(batch):
            longest = max(len(ids) for ids in batch)
            ids = np.full((len(batch), longest), pad, dtype=np.int64)
            mask = np.zeros((len(batch), longest), dtype=np.int64)
            for row, x in enumerate(batch):
                ids[row, : len(x)] = x
                mask[row, : len(x)] = 1
            hidden = session.run(None, {"ids": ids, "mask": mask})[0]
            hidden = hidden / np.linalg.norm(hidden, axis=-1, keepdims=True)
            return [Embedding(tuple(x), torch.from_numpy(hidden[row, : len(x)].copy()))
                    for row, x in enumerate(batch)]
    ids = token_ids(loaded, texts)
    began = time.perf_counter()
    embs = dict(zip(texts, run_in_batches(ids, [len(i) for i in ids], forward, batch_size)))
    forward_s = time.perf_counter() - began
    specials = special_ids(loaded)
    matches = greedy_match_many([
        (embs[o], embs[s], weights(embs[o].ids, None, specials),
         weights(embs[s].ids, None, specials)) for o, s in pairs
    ])
    json.dump({"forward_s": forward_s, "f1": [m.f1 for m in matches]}, open(out, "w"))
    """
)


def _export() -> float:
    """Export the metric's encoder, cut after its layer, as the product does
    (meaningbench.metrics.neural.support.onnx_encoder); the seconds it took."""
    from meaningbench.metrics.neural.bertscore import BertScoreMetric
    from meaningbench.metrics.neural.support.onnx_encoder import export

    metric = BertScoreMetric(backend="torch")
    began = time.perf_counter()
    export(metric.loaded(), f"L{metric.layer()}")
    return time.perf_counter() - began


@pytest.mark.benchmark
@pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None,
    reason="the ONNX experiment needs `pip install onnxruntime onnx`",
)
def test_onnx_runtime_against_torch(shared_datasets: Path, tmp_path: Path) -> None:
    from meaningbench.metrics.neural.bertscore import BertScoreMetric
    from meaningbench.metrics.neural.support.models import resolve_model
    from meaningbench.metrics.neural.support.onnx_encoder import export_path

    metric = BertScoreMetric()
    cached = export_path(resolve_model(metric.model_name()), f"L{metric.layer()}")
    export_s = None if cached.exists() else _export()
    train = shared_datasets / "csmd" / "train.tsv"
    script = tmp_path / "process.py"
    script.write_text(PROCESS)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    walls: dict[str, list[float]] = {"torch": [], "onnx": []}
    forwards: dict[str, list[float]] = {"torch": [], "onnx": []}
    loads: list[float] = []
    f1: dict[str, list[float]] = {}
    for round_ in range(ROUNDS):
        loads.append(round(os.getloadavg()[0], 2))
        for backend in ("torch", "onnx") if round_ % 2 == 0 else ("onnx", "torch"):
            out = tmp_path / f"{backend}{round_}.json"
            began = time.perf_counter()
            subprocess.run([sys.executable, str(script), backend, str(cached), str(train),
                            str(out)], env=env, check=True, capture_output=True)  # fmt: skip
            walls[backend].append(time.perf_counter() - began)
            result = json.loads(out.read_text())
            forwards[backend].append(result["forward_s"])
            f1[backend] = result["f1"]
            print(f"round {round_} {backend}: {walls[backend][-1]:.1f} s, forward "
                  f"{forwards[backend][-1]:.1f} s, load {loads[-1]}", flush=True)  # fmt: skip

    def speedup(times: dict[str, list[float]]) -> float:
        return statistics.median(t / o for t, o in zip(times["torch"], times["onnx"], strict=True))

    diff = max(abs(a - b) for a, b in zip(f1["torch"], f1["onnx"], strict=True))
    figures = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(),
        "items": len(f1["torch"]),
        "export_seconds": export_s,
        "whole_process_seconds": walls,
        "forward_seconds": forwards,
        "load_average_per_round": loads,
        "whole_process_speedup_median": speedup(walls),
        "forward_speedup_median": speedup(forwards),
        "max_abs_f1_diff": diff,
        # One run's verdict; on a loaded machine the per-round ratios say whether to trust it.
        "meets_the_bar_in_this_run": diff <= TOLERANCE and speedup(walls) >= NEEDED_SPEEDUP,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
