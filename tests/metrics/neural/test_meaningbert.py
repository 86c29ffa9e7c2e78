"""MeaningBERT: a cross-encoder regression head read exactly as transformers reads it."""

from __future__ import annotations

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.meaningbert import DEFAULT_MEANINGBERT, MeaningBertMetric
from tests.metrics.neural.conftest import SENTENCES


def _pairs(rows):
    return [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(rows)]


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_logit_is_the_score(tiny_regression_model, backend):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_regression_model)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_regression_model).eval()
    long_source = " ".join(["The river flooded the village after the rain."] * 80)  # > 512 tokens
    rows = [*SENTENCES, (long_source, "The village flooded.")]
    expected = []
    for s, o in rows:
        # list form: an empty output still makes a pair ([SEP] [SEP]), as in a batch
        enc = tok([s], [o], truncation="longest_first", max_length=512, return_tensors="pt")
        with torch.no_grad():
            expected.append(float(model(**enc).logits[0, 0]))
    metric = MeaningBertMetric(model=tiny_regression_model, batch_size=3, backend=backend)
    ours = metric.score_batch(_pairs(rows))
    assert metric.backend().name == backend  # ONNX Runtime ran, not a fallback
    assert [i.raw for i in ours] == pytest.approx(expected, abs=1e-5)
    for item in ours:
        assert item.value == pytest.approx(min(100.0, max(0.0, item.raw)))


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_value_is_clipped_to_0_100(tiny_regression_model, tmp_path, backend):
    """A head whose bias pushes the logit far above 100 gives raw > 100 and value 100."""
    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(tiny_regression_model)
    with torch.no_grad():
        model.classifier.bias.fill_(1000.0)
    model.save_pretrained(tmp_path)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (tmp_path / name).write_bytes(
            (__import__("pathlib").Path(tiny_regression_model) / name).read_bytes()
        )
    metric = MeaningBertMetric(model=str(tmp_path), backend=backend)
    (item,) = metric.score_batch(_pairs(SENTENCES[:1]))
    assert item.raw > 100 and item.value == 100.0


def test_default_checkpoint_offline_is_explained():
    metric = MeaningBertMetric()
    assert metric.config["model"] == DEFAULT_MEANINGBERT
    availability = metric.availability()
    assert not availability.ok
    assert "not available offline" in availability.reason
    assert "local directory" in availability.reason
    with pytest.raises(UserError, match="not available offline"):
        metric.score_batch(_pairs(SENTENCES[:1]))


def test_a_classifier_is_refused(minilm_path, tmp_path):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=3,
    )
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (tmp_path / name).write_bytes((__import__("pathlib").Path(minilm_path) / name).read_bytes())
    with pytest.raises(UserError, match="3 labels"):
        MeaningBertMetric(model=str(tmp_path)).score_batch(_pairs(SENTENCES[:1]))
