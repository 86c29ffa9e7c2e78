"""Encoders for the sweep tests: a tiny BERT with random weights (three layers, the MiniLM
vocabulary), saved as a local model folder, and the bundled MiniLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.metrics.neural.conftest import _save_with_tokenizer, minilm_path  # noqa: F401


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> str:  # noqa: F811
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    model = BertModel(config, add_pooling_layer=False)
    return _save_with_tokenizer(model, tmp_path_factory.mktemp("tiny-encoder"), minilm_path)


class ForwardCounter:
    """Counts the sequences that go through a model's embedding layer (every forward pass
    of the model or of a view cut after some layer goes through it)."""

    def __init__(self, loaded) -> None:
        self.sequences = 0
        self._handle = loaded.model.embeddings.register_forward_hook(self._hook)

    def _hook(self, module, args, output) -> None:
        self.sequences += int(output.shape[0])

    def close(self) -> None:
        self._handle.remove()


def write_corpus(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
