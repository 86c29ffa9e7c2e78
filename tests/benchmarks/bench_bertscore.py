"""BERTScore: speed against the bert-score package, and memory of a long streaming run.

    python -m pytest tests/benchmarks/bench_bertscore.py -s -p no:xdist

1. The 853 CSMD train pairs (source as reference) with the default encoder and layer, scored
   by `bert_score.BERTScorer.score` and by this project's metric in one call each; model
   loading is excluded for both, the embedding caches start empty (the on-disk one is off).
   After one untimed pass of each (torch's kernel warm-up), each side runs twice in
   alternating order, and its best time counts (the machine is shared).
   Targets: identical scores (max |diff| ≤ 1e-5) and ≥ 1.2× bert-score's items/s.
2. Synthetic items of 20–40 words fed in batches of 256, as the scoring job feeds them, with
   every default on (alignment details, bounded memory and disk caches). The resident set
   size is sampled as the count grows; a flat curve is what lets a million items fit.
   MB_BENCH_STREAM_ITEMS sets the count (default 10,000; the full target is 1,000,000) and
   MB_BENCH_STREAM_LAYER a shallower layer of the same encoder, which makes the million
   affordable on a CPU (~400 items/s at layer 1 against ~95 at layer 6 here) while every
   data structure — 384-wide token vectors, caches, alignments — stays that of the default.
   Target: peak RSS ≤ 2.5 GB.
3. Peak RSS at growing counts, each in a fresh process, for `bert_score.BERTScorer.score`
   (which embeds every sentence before matching) and for this project's metric fed in
   batches; bert-score's slope is extrapolated to a million items. MB_BENCH_GROWTH_ITEMS
   sets the counts (default 5000,10000,20000: past the point where the in-memory cache is
   full), MB_BENCH_GROWTH_LAYER the layer for both sides (default 1, for time; a sentence's
   vectors are as wide at every layer).
4. The whole `meaningbench score` command on an imported 1,000,000-item study of such
   pairs, its resident size watched for a few minutes (MB_BENCH_JOB_SECONDS) before it is
   interrupted: the texts and hashes the job holds for the whole study come on top of the
   metric's own memory. Target: peak RSS ≤ 2.5 GB.
Writes tests/benchmarks/results/bertscore.json.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.support import cache
from meaningbench.metrics.neural.support.baselines import builtin_sentences
from tests.benchmarks.machine import describe_machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "bertscore.json"
STREAM_ITEMS = int(os.environ.get("MB_BENCH_STREAM_ITEMS", "10000"))
STREAM_BATCH = 256
# A shallower layer of the same encoder makes a million items affordable on a CPU: the
# tokenizer, the 384-wide vectors, the caches and the alignments are those of the default.
GROWTH_LAYER = int(os.environ.get("MB_BENCH_GROWTH_LAYER", "1"))
STREAM_LAYER = (
    int(os.environ["MB_BENCH_STREAM_LAYER"]) if "MB_BENCH_STREAM_LAYER" in os.environ else None
)


def _save(section: str, figures: dict) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    data["machine"] = describe_machine(
        torch_threads=torch.get_num_threads(),
        gpu=gpu or "none (CPU only; GPU figures not measured)",
    )
    data[section] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), **figures}
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.benchmark
def test_speed_against_bert_score(shared_datasets: Path) -> None:
    import pandas as pd
    from bert_score import BERTScorer

    frame = pd.read_csv(shared_datasets / "csmd" / "train.tsv", sep="\t")
    sources = frame["original"].astype(str).tolist()
    outputs = frame["simplification"].astype(str).tolist()
    pairs = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(zip(sources, outputs, strict=True))]
    metric = BertScoreMetric(embedding_cache_mb=0, alignment=False, device="cpu")
    loaded = metric.loaded()
    oracle = BERTScorer(model_type=loaded.ref.location, num_layers=metric.layer(), device="cpu")
    # One untimed pass of each warms torch's kernels for these shapes, which would otherwise
    # be paid by whichever side runs first; then the order alternates.
    metric.score_batch(pairs)
    oracle.score(outputs, sources)
    ours_s: list[float] = []
    theirs_s: list[float] = []
    for round_ in range(2):
        for side in ("ours", "theirs") if round_ == 0 else ("theirs", "ours"):
            cache.MEMORY.clear()
            began = time.perf_counter()
            if side == "ours":
                ours = metric.score_batch(pairs)
                ours_s.append(time.perf_counter() - began)
            else:
                P, R, F = oracle.score(outputs, sources)
                theirs_s.append(time.perf_counter() - began)
    diff = max(
        max(abs(o.details[k] - float(t[i])) for k, t in (("P", P), ("R", R), ("F1", F)))
        for i, o in enumerate(ours)
    )
    n = len(pairs)
    figures = {
        "items": n,
        "layer": metric.layer(),
        "ours_items_per_s": n / min(ours_s),
        "bert_score_items_per_s": n / min(theirs_s),
        "speedup": min(theirs_s) / min(ours_s),
        "max_abs_diff": diff,
        "ours_seconds": ours_s,
        "bert_score_seconds": theirs_s,
    }
    _save("csmd_train_speed", figures)
    print(json.dumps(figures, indent=2))
    assert diff <= 1e-5
    assert figures["speedup"] >= 1.2


def _synthetic(rng: random.Random, vocab: list[str]) -> str:
    return " ".join(rng.choice(vocab) for _ in range(rng.randint(20, 40))).capitalize() + "."


def synthetic_pairs(count: int, seed: int = 0) -> Iterator[Pair]:
    """Source/output pairs of 20–40 random words from the baseline sentences' vocabulary."""
    vocab = sorted({w.strip(".,").lower() for s in builtin_sentences() for w in s.split()})
    rng = random.Random(seed)
    for k in range(count):
        source = _synthetic(rng, vocab)
        yield Pair(k, source, _synthetic(rng, vocab), (source,))


@pytest.mark.benchmark
def test_streaming_memory() -> None:
    metric = BertScoreMetric(device="cpu", layer=STREAM_LAYER)
    metric.loaded()
    samples: list[dict[str, float]] = []
    checkpoints = [STREAM_ITEMS * k // 20 for k in range(1, 21)]
    began = last_t = time.perf_counter()
    done = last_done = 0
    pairs = synthetic_pairs(STREAM_ITEMS)
    while done < STREAM_ITEMS:
        batch = list(itertools.islice(pairs, STREAM_BATCH))
        scores = metric.score_batch(batch)
        assert len(scores) == len(batch) and all(s.value is not None for s in scores)
        done += len(batch)
        if done >= checkpoints[0]:
            while checkpoints and done >= checkpoints[0]:
                checkpoints.pop(0)
            now = time.perf_counter()
            samples.append(
                {
                    "items": done,
                    "rss_mb": round(_rss_mb(), 1),
                    "peak_rss_mb": round(_peak_mb(), 1),
                    "memory_cache_mb": round(cache.MEMORY.nbytes / 2**20, 1),
                    "heap_trims": cache.MEMORY.trims,
                    "items_per_s": round((done - last_done) / (now - last_t), 1),
                    "seconds": round(now - began, 1),
                }
            )
            last_t, last_done = now, done
            print(samples[-1], flush=True)
    peak_mb = _peak_mb()
    elapsed = time.perf_counter() - began
    second_half = [s["rss_mb"] for s in samples[len(samples) // 2 :]]
    figures = {
        "items": STREAM_ITEMS,
        "layer": metric.layer(),
        "batch": STREAM_BATCH,
        "words_per_sentence": "20-40",
        "items_per_s": STREAM_ITEMS / elapsed,
        "peak_rss_mb": peak_mb,
        "rss_second_half_min_max_mb": [min(second_half), max(second_half)],
        "rss_samples": samples,
        "note": "peak RSS of the whole process (Python, torch, model, caches, alignments)",
    }
    default = STREAM_LAYER is None
    _save("streaming_memory" if default else f"streaming_memory_layer{metric.layer()}", figures)
    print(json.dumps({k: v for k, v in figures.items() if k != "rss_samples"}, indent=2))
    assert peak_mb <= 2.5 * 1024


_PEAK_SCRIPT = """
import itertools, json, resource, sys, time
sys.path.insert(0, {root!r})
from tests.benchmarks.bench_bertscore import synthetic_pairs
pairs = list(synthetic_pairs({n}))
cands = [p.output for p in pairs]
refs = [p.source for p in pairs]
if {which!r} == "bert_score":
    from bert_score import BERTScorer
    from meaningbench.metrics.neural.support.models import resolve_model
    from meaningbench.settings import DEFAULT_ENCODER
    scorer = BERTScorer(model_type=resolve_model(DEFAULT_ENCODER).location, num_layers={layer},
                        device="cpu", batch_size=64)
    began = time.perf_counter()
    scorer.score(cands, refs, batch_size=64)
else:
    from meaningbench.metrics.neural.bertscore import BertScoreMetric
    metric = BertScoreMetric(device="cpu", layer={layer})
    metric.loaded()
    began = time.perf_counter()
    it = iter(pairs)
    while batch := list(itertools.islice(it, 256)):
        metric.score_batch(batch)
print(json.dumps({{"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                   "seconds": time.perf_counter() - began}}))
"""


@pytest.mark.benchmark
def test_peak_memory_grows_with_items_for_bert_score_only(tmp_path: Path) -> None:
    """Each count runs in a fresh process, so its peak RSS is its own."""
    counts = [
        int(c) for c in os.environ.get("MB_BENCH_GROWTH_ITEMS", "5000,10000,20000").split(",")
    ]
    env = {**os.environ, "MEANINGBENCH_HOME": str(tmp_path / "home")}
    runs: dict[str, list[dict[str, float]]] = {"bert_score": [], "meaningbench": []}
    for which in runs:
        for n in counts:
            code = _PEAK_SCRIPT.format(root=str(ROOT), n=n, which=which, layer=GROWTH_LAYER)
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            result = json.loads(done.stdout.strip().splitlines()[-1])
            runs[which].append({"items": n, **result})
            print(which, runs[which][-1], flush=True)
    slopes = {
        which: (r[-1]["peak_mb"] - r[0]["peak_mb"]) / (r[-1]["items"] - r[0]["items"])
        for which, r in runs.items()
    }
    figures = {
        "counts": counts,
        "runs": runs,
        "mb_per_1000_items": {k: v * 1000 for k, v in slopes.items()},
        "bert_score_peak_at_1m_items_extrapolated_gb": (
            runs["bert_score"][-1]["peak_mb"] + slopes["bert_score"] * (1_000_000 - counts[-1])
        )
        / 1024,
        "layer": GROWTH_LAYER,
        "note": "default encoder, CPU; linear extrapolation of bert_score's peak RSS",
    }
    _save("peak_memory_growth", figures)
    print(json.dumps(figures, indent=2))
    assert slopes["bert_score"] > 4 * max(slopes["meaningbench"], 0.001)


def _proc_status_mb(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out


@pytest.mark.benchmark
def test_scoring_job_memory_on_a_million_item_study(tmp_path: Path) -> None:
    """`meaningbench score` on a 1,000,000-item study (20–40-word sentences), watched for
    MB_BENCH_JOB_SECONDS (default 180) and then interrupted: the whole job — the study's
    texts and hashes, the model, the caches, the commits — within the memory target."""
    exe = shutil.which("meaningbench", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the meaningbench console script is not installed")
    items = int(os.environ.get("MB_BENCH_JOB_ITEMS", "1000000"))
    watch_s = float(os.environ.get("MB_BENCH_JOB_SECONDS", "180"))
    data, study = tmp_path / "pairs.csv", tmp_path / "million.mbstudy"
    with data.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["source", "output", "system"])
        for pair in synthetic_pairs(items, seed=1):
            writer.writerow([pair.source, pair.output, f"system-{pair.item_id % 7}"])
    env = {**os.environ, "MEANINGBENCH_HOME": str(tmp_path / "home")}
    subprocess.run([exe, "import", str(study), str(data)], env=env, check=True, capture_output=True)
    metric = f"bertscore[layer={GROWTH_LAYER}]"
    job = subprocess.Popen(
        [exe, "score", str(study), "--metrics", metric, "--device", "cpu", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    samples: list[dict[str, float]] = []
    began = time.perf_counter()
    while time.perf_counter() - began < watch_s and job.poll() is None:
        time.sleep(2.0)
        with contextlib.suppress(OSError):
            mem = _proc_status_mb(job.pid)
            samples.append({"seconds": round(time.perf_counter() - began, 1), **mem})
    job.send_signal(signal.SIGINT)
    job.communicate(timeout=600)
    with sqlite3.connect(study) as conn:
        (scored,) = conn.execute("SELECT COUNT(*) FROM score").fetchone()
    peak = max(s.get("VmHWM", 0.0) for s in samples)
    figures = {
        "items_in_study": items,
        "metric": metric,
        "watched_s": watch_s,
        "items_scored": scored,
        "peak_rss_mb": peak,
        "rss_mb_every_20s": [s.get("VmRSS") for s in samples[::10]],
        "note": "the score command's own process; texts and hashes of the whole study loaded",
    }
    _save("scoring_job_memory", figures)
    print(json.dumps(figures, indent=2))
    assert scored > 0
    assert peak <= 2.5 * 1024
