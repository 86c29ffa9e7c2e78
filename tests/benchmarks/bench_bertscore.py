"""BERTScore: speed against the bert-score package, and memory of a long streaming run.

    python -m pytest tests/benchmarks/bench_bertscore.py -s -p no:xdist

1. The 853 CSMD train pairs (source as reference) with the default encoder and layer, scored
   by `bert_score.BERTScorer.score` and by this project's metric in one call each; model
   loading is excluded for both, the embedding caches start empty (the on-disk one is off).
   Each side runs twice, alternating, and its best time counts (the machine is shared).
   Targets: identical scores (max |diff| ≤ 1e-5) and ≥ 1.2× bert-score's items/s.
2. Synthetic items of 20–40 words fed in batches of 256, as the scoring job feeds them, with
   every default on (alignment details, bounded memory and disk caches). The resident set
   size is sampled as the count grows; a flat curve is what lets a million items fit.
   MB_BENCH_STREAM_ITEMS sets the count (default 10,000; the full target is 1,000,000).
   Target: peak RSS ≤ 2.5 GB.
Writes tests/benchmarks/results/bertscore.json.
"""

from __future__ import annotations

import json
import os
import platform
import random
import resource
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.metrics.base import Pair
from app.metrics.neural import cache
from app.metrics.neural.baselines import builtin_sentences
from app.metrics.neural.bertscore import BertScoreMetric

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "bertscore.json"
STREAM_ITEMS = int(os.environ.get("MB_BENCH_STREAM_ITEMS", "10000"))
STREAM_BATCH = 256


def _save(section: str, figures: dict) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data["machine"] = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "torch_threads": __import__("torch").get_num_threads(),
        "gpu": "none (CPU only; GPU figures not measured)",
    }
    data[section] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), **figures}
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


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
    ours_s, theirs_s = [], []
    for _ in range(2):
        cache.MEMORY.clear()
        began = time.perf_counter()
        ours = metric.score_batch(pairs)
        ours_s.append(time.perf_counter() - began)
        began = time.perf_counter()
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


@pytest.mark.benchmark
def test_streaming_memory() -> None:
    vocab = sorted({w.strip(".,").lower() for s in builtin_sentences() for w in s.split()})
    rng = random.Random(0)
    metric = BertScoreMetric(device="cpu")
    metric.loaded()
    samples: list[dict[str, float]] = []
    checkpoints = sorted({STREAM_ITEMS // 10, STREAM_ITEMS // 4, STREAM_ITEMS // 2, STREAM_ITEMS})
    began = time.perf_counter()
    done = 0
    while done < STREAM_ITEMS:
        n = min(STREAM_BATCH, STREAM_ITEMS - done)
        batch = []
        for k in range(n):
            source = _synthetic(rng, vocab)
            batch.append(Pair(done + k, source, _synthetic(rng, vocab), (source,)))
        scores = metric.score_batch(batch)
        assert len(scores) == n
        done += n
        if checkpoints and done >= checkpoints[0]:
            checkpoints.pop(0)
            samples.append(
                {"items": done, "rss_mb": _rss_mb(), "seconds": time.perf_counter() - began}
            )
            print(samples[-1], flush=True)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    elapsed = time.perf_counter() - began
    figures = {
        "items": STREAM_ITEMS,
        "batch": STREAM_BATCH,
        "words_per_sentence": "20-40",
        "items_per_s": STREAM_ITEMS / elapsed,
        "peak_rss_mb": peak_mb,
        "rss_samples": samples,
        "memory_cache_mb_at_end": cache.MEMORY.nbytes / 2**20,
        "note": "peak RSS of the whole process (Python, torch, model, caches)",
    }
    _save("streaming_memory", figures)
    print(json.dumps(figures, indent=2))
    assert peak_mb <= 2.5 * 1024
