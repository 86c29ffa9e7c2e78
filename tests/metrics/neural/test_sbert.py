"""Sentence-BERT cosine against sentence-transformers (the oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.sbert import PoolingConfig, SentenceCosineMetric
from meaningbench.metrics.neural.support.models import resolve_model
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
    assert PoolingConfig.of_model(resolve_model(str(folder))).modes == ("cls",)
    assert PoolingConfig.of_model(resolve_model(minilm_path)) == PoolingConfig(
        ("mean",), 256, False
    )
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


def _cls_pooled_copy(model: str, folder: Path) -> Path:
    """A sentence-transformers folder of `model` that pools with the CLS token and cuts at
    32 tokens (modules.json, 1_Pooling/config.json, sentence_bert_config.json)."""
    folder.mkdir()
    for entry in Path(model).iterdir():
        if entry.is_file() and entry.name not in ("modules.json", "sentence_bert_config.json"):
            (folder / entry.name).symlink_to(entry)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]  # fmt: skip
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "1_Pooling").mkdir()
    pooling = {"word_embedding_dimension": 32, "pooling_mode_cls_token": True}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 32}))
    return folder


HUB_CHILD = """
import json, sys
from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.sbert import PoolingConfig, SentenceCosineMetric
from meaningbench.metrics.neural.support.models import resolve_model
rows = json.loads(sys.argv[1])
pairs = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(rows)]
metric = SentenceCosineMetric(model="meaningbench-test/cls-bert", embedding_cache_mb=0,
                              backend="torch")
scores = [s.raw for s in metric.score_batch(pairs)]
pooling = PoolingConfig.of_model(resolve_model("meaningbench-test/cls-bert"))
print(json.dumps({"scores": scores, "modes": pooling.modes, "max": pooling.max_seq_length}))
"""


def test_a_hub_model_pools_as_its_sentence_transformers_files_say(tiny_encoder, tmp_path):
    """A hub id's pooling comes from its repository's sentence-transformers files, fetched
    beside the weights (transformers does not fetch them): the same scores as the same
    model from a folder, not mean pooling."""
    import os
    import subprocess
    import sys

    from tests.metrics.neural.local_hub import local_hub

    folder = _cls_pooled_copy(tiny_encoder, tmp_path / "cls-bert")
    rows = [(s, o) for s, o in SENTENCES if o][:4]
    with local_hub("meaningbench-test/cls-bert", folder) as (url, seen):
        env = dict(os.environ, HF_ENDPOINT=url, HF_HOME=str(tmp_path / "hf"),
                   HF_HUB_OFFLINE="0", TRANSFORMERS_OFFLINE="0",
                   MEANINGBENCH_HOME=str(tmp_path / "home"))  # fmt: skip
        done = subprocess.run([sys.executable, "-c", HUB_CHILD, json.dumps(rows)], env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    hub = json.loads(done.stdout.strip().splitlines()[-1])
    assert any("1_Pooling/config.json" in r for r in seen)
    assert hub["modes"] == ["cls"] and hub["max"] == 32
    local = [i.raw for i in _ours(str(folder), rows, "torch")]
    assert hub["scores"] == pytest.approx(local, abs=1e-6)
    mean = [i.raw for i in _ours(tiny_encoder, rows, "torch")]
    assert hub["scores"] != pytest.approx(mean, abs=1e-3)


def test_a_sentence_transformers_module_it_does_not_run_is_refused_by_name(tiny_encoder, tmp_path):
    folder = _cls_pooled_copy(tiny_encoder, tmp_path / "layernorm-bert")
    modules = json.loads((folder / "modules.json").read_text())
    kind = "sentence_transformers.models.LayerNorm"
    modules.insert(2, {"idx": 2, "path": "2_LayerNorm", "type": kind})
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(UserError, match=rf"module {kind} \(2_LayerNorm\) is not one"):
        _ours(str(folder), [("A cat.", "A dog.")])


def _dense_model(encoder_path: str, folder: Path, activation, residual: bool = False) -> str:
    """A sentence-transformers model saved by the library: the encoder, mean pooling, a
    Dense layer with its own seeded weights and the normalisation."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Dense, Normalize, Pooling, Transformer

    torch.manual_seed(3)
    encoder = Transformer(encoder_path)
    size = encoder.get_word_embedding_dimension()
    pooling = Pooling(size, "mean")
    width = size if residual else 16
    dense = Dense(size, width, activation_function=activation, use_residual=residual)
    SentenceTransformer(modules=[encoder, pooling, dense, Normalize()]).save(str(folder))
    return str(folder)


@BACKENDS
@pytest.mark.parametrize("activation", ["Tanh", "Identity", "residual"])
def test_dense_modules_score_as_sentence_transformers(minilm_path, tmp_path, backend, activation):
    import torch

    act = torch.nn.Identity() if activation == "Identity" else torch.nn.Tanh()
    model = _dense_model(minilm_path, tmp_path / "dense", act, activation == "residual")
    rows = [(s, o) for s, o in SENTENCES if o][:5]
    expected = _cosines(model, rows)
    ours = [i.raw for i in _ours(model, rows, backend)]
    assert ours == pytest.approx(expected, abs=1e-5)
    plain = [i.raw for i in _ours(minilm_path, rows, backend)]  # the same without Dense
    assert ours != pytest.approx(plain, abs=1e-3)


def test_a_dense_activation_it_does_not_run_is_refused_by_name(minilm_path, tmp_path):
    import torch

    model = _dense_model(minilm_path, tmp_path / "gelu", torch.nn.GELU())
    with pytest.raises(UserError, match=r"Dense module \(2_Dense\) uses the activation GELU"):
        _ours(model, [("A cat.", "A dog.")])
