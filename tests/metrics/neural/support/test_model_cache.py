"""The process-wide model cache serves one copy per model, and never a stale one."""

from __future__ import annotations

from pathlib import Path

from meaningbench.metrics.neural.support.models import clear_model_cache, load_model
from tests.metrics.neural.conftest import _save_with_tokenizer, _tiny_config


def test_retrained_model_in_the_same_folder_is_reloaded(tmp_path: Path, minilm_path: str) -> None:
    import torch
    from transformers import BertForSequenceClassification

    folder = tmp_path / "model"
    torch.manual_seed(0)
    _save_with_tokenizer(
        BertForSequenceClassification(_tiny_config(num_labels=1)), folder, minilm_path
    )
    clear_model_cache()
    first = load_model(str(folder), kind="cross-encoder", device="cpu")
    assert load_model(str(folder), kind="cross-encoder", device="cpu") is first

    torch.manual_seed(1)
    _save_with_tokenizer(
        BertForSequenceClassification(_tiny_config(num_labels=1)), folder, minilm_path
    )
    second = load_model(str(folder), kind="cross-encoder", device="cpu")
    assert second is not first
    w1 = first.model.classifier.weight
    w2 = second.model.classifier.weight
    assert not torch.equal(w1, w2)
    clear_model_cache()
