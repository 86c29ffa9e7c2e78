"""Sentence-BERT cosine against sentence-transformers (the oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.sbert import PoolingConfig, SentenceCosineMetric
from tests.metrics.neural.conftest import SENTENCES


def _cosines(model_path: str, rows) -> list[float]:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_path, device="cpu")
    a = model.encode([s for s, _ in rows], convert_to_tensor=True)
    b = model.encode([o for _, o in rows], convert_to_tensor=True)
    import torch

    return torch.nn.functional.cosine_similarity(a, b).tolist()


def _ours(model: str, rows, backend=None, **config) -> list:
    metric = SentenceCosineMetric(model=model, embedding_cache_mb=0, backend=backend, **config)
    scores = metric.score_batch([Pair(i, s, o, (s,)) for i, (s, o) in enumerate(rows)])
    if backend is not None:
        assert metric.backend().name == backend, metric.backend()  # no fallback
    return scores


# The reference tests run on both backends: ONNX Runtime must not move a score.
BACKENDS = pytest.mark.parametrize("backend", ["torch", "onnx"])


@BACKENDS
def test_equals_sentence_transformers(minilm_path, backend):
    rows = [(s, o) for s, o in SENTENCES if o]
    expected = _cosines(minilm_path, rows)
    ours = _ours(minilm_path, rows, backend)
    for item, cos in zip(ours, expected, strict=True):
        assert item.raw == pytest.approx(cos, abs=1e-5)
        assert item.value == pytest.approx(100 * max(0.0, cos), abs=1e-3)
    assert ours[5].raw == pytest.approx(1.0, abs=1e-6)  # identical sentences


@BACKENDS
def test_reads_the_pooling_config(minilm_path, tmp_path: Path, backend):
    """A copy of MiniLM told to pool with the CLS token scores as sentence-transformers says."""
    folder = tmp_path / "cls-minilm"
    folder.mkdir()
    for entry in Path(minilm_path).iterdir():
        if entry.name != "1_Pooling":
            (folder / entry.name).symlink_to(entry)
    (folder / "1_Pooling").mkdir()
    config = json.loads((Path(minilm_path) / "1_Pooling" / "config.json").read_text())
    config.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))
    assert PoolingConfig.from_folder(folder).modes == ("cls",)
    assert PoolingConfig.from_folder(minilm_path) == PoolingConfig(("mean",), 256, False)
    rows = [(s, o) for s, o in SENTENCES if o][:4]
    expected = _cosines(str(folder), rows)
    ours = _ours(str(folder), rows, backend)
    assert [i.raw for i in ours] == pytest.approx(expected, abs=1e-5)
    mean_scores = [i.raw for i in _ours(minilm_path, rows)]
    assert [i.raw for i in ours] != pytest.approx(mean_scores, abs=1e-3)


def test_shares_the_encoder_with_bertscore(minilm_path):
    from meaningbench.metrics.neural.bertscore import BertScoreMetric

    cosine = SentenceCosineMetric()
    bertscore = BertScoreMetric()
    assert cosine.loaded() is bertscore.loaded()  # one load per process
    view = __import__(
        "meaningbench.metrics.neural.support.models", fromlist=["layer_view"]
    ).layer_view(bertscore.loaded(), 3)
    full = bertscore.loaded().model
    assert len(view.encoder.layer) == 3 and len(full.encoder.layer) == 6
    assert view.embeddings.word_embeddings.weight is full.embeddings.word_embeddings.weight
