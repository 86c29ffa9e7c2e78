"""The `bleurt-pytorch` package's own model classes, importable beside transformers 5.

The package (0.0.1) imports its tokenizers from modules transformers 5 removed, and its
model calls three helpers transformers 5 dropped: `find_pruneable_heads_and_indices` (head
pruning, never called when scoring), `get_extended_attention_mask` and `get_head_mask`. The
oracle skips the package's `__init__` (which imports the tokenizers) and restores the three
helpers as transformers 4 defined them; the model code itself runs unchanged.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest

INSTALL = "pip install --no-deps bleurt-pytorch==0.0.1 (`make test` installs it)"


def package_classes(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """(BleurtConfig, BleurtForSequenceClassification) from the installed package."""
    spec = importlib.util.find_spec("bleurt_pytorch")
    if spec is None or spec.origin is None:
        pytest.skip(f"the BLEURT parity oracle needs bleurt-pytorch: {INSTALL}")
    import torch
    import transformers.pytorch_utils as pu

    def no_pruning(*_args: Any, **_kwargs: Any) -> Any:
        raise NotImplementedError("head pruning is not part of scoring")

    monkeypatch.setattr(pu, "find_pruneable_heads_and_indices", no_pruning, raising=False)
    root = Path(spec.origin).parent
    for name, path in (("bleurt_pytorch", root), ("bleurt_pytorch.bleurt", root / "bleurt")):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        monkeypatch.setitem(sys.modules, name, module)
    for name in ("configuration_bleurt", "modeling_bleurt"):
        monkeypatch.delitem(sys.modules, f"bleurt_pytorch.bleurt.{name}", raising=False)
    from bleurt_pytorch.bleurt.configuration_bleurt import BleurtConfig
    from bleurt_pytorch.bleurt.modeling_bleurt import (
        BleurtForSequenceClassification,
        BleurtModel,
    )

    def get_extended_attention_mask(self, attention_mask, input_shape, device=None, dtype=None):
        dtype = dtype or self.dtype
        extended = attention_mask[:, None, None, :].to(dtype)
        return (1.0 - extended) * torch.finfo(dtype).min

    def get_head_mask(self, head_mask, num_hidden_layers, is_attention_chunked=False):
        assert head_mask is None
        return [None] * num_hidden_layers

    monkeypatch.setattr(
        BleurtModel, "get_extended_attention_mask", get_extended_attention_mask, raising=False
    )
    monkeypatch.setattr(BleurtModel, "get_head_mask", get_head_mask, raising=False)
    return BleurtConfig, BleurtForSequenceClassification
