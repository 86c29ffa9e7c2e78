"""The BLEURT regression model, ported for inference from `bleurt-pytorch` 0.0.1.

`bleurt-pytorch` (Diliello's conversion of Google's BLEURT checkpoints) no longer imports
with transformers 5 (its modules import helpers transformers removed), so the forward pass
lives here: BERT layers, an optional projection of smaller embeddings (the BLEURT-20 family),
the tanh pooler over the first token and a linear head. The parameter names are the
package's, so its checkpoints load unchanged; tests/metrics/test_bleurt.py checks the logits
against the package's own `BleurtForSequenceClassification` on the same weights.

This module imports torch at the top: it is only imported inside the metric's methods.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from meaningbench.errors import UserError

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
# Buffers the package registers; a checkpoint may or may not carry them.
_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")


@dataclass(frozen=True)
class BleurtConfig:
    vocab_size: int = 30522
    embedding_size: int | None = None
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    num_labels: int = 1

    @classmethod
    def from_file(cls, path: Path) -> BleurtConfig:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("model_type", "bleurt") != "bleurt":
            raise UserError(
                f"{path.parent} is a {data.get('model_type')!r} model, not a BLEURT checkpoint"
            )
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def _activation(name: str) -> nn.Module:
    from transformers.activations import ACT2FN

    return ACT2FN[name]  # type: ignore[no-any-return]


class _Embeddings(nn.Module):
    def __init__(self, c: BleurtConfig) -> None:
        super().__init__()
        size = c.embedding_size if c.embedding_size is not None else c.hidden_size
        self.word_embeddings = nn.Embedding(c.vocab_size, size, padding_idx=c.pad_token_id)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, size)
        self.LayerNorm = nn.LayerNorm(size, eps=c.layer_norm_eps)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)[None, :]
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(positions)
        return self.LayerNorm(x)  # type: ignore[no-any-return]


class _SelfAttention(nn.Module):
    def __init__(self, c: BleurtConfig) -> None:
        super().__init__()
        if c.hidden_size % c.num_attention_heads:
            raise UserError(
                f"hidden size {c.hidden_size} is not a multiple of {c.num_attention_heads} heads"
            )
        self.heads = c.num_attention_heads
        self.head_size = c.hidden_size // c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(*x.shape[:-1], self.heads, self.head_size).permute(0, 2, 1, 3)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size) + mask
        context = torch.matmul(scores.softmax(dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return context.view(*context.shape[:-2], self.heads * self.head_size)


class _Residual(nn.Module):
    """dense → add the input → LayerNorm (the package's SelfOutput and Output)."""

    def __init__(self, c: BleurtConfig, size_in: int) -> None:
        super().__init__()
        self.dense = nn.Linear(size_in, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(x) + residual)  # type: ignore[no-any-return]


class _Attention(nn.Module):
    def __init__(self, c: BleurtConfig) -> None:
        super().__init__()
        self.self = _SelfAttention(c)
        self.output = _Residual(c, c.hidden_size)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.output(self.self(x, mask), x)  # type: ignore[no-any-return]


class _Intermediate(nn.Module):
    def __init__(self, c: BleurtConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)
        self.act = _activation(c.hidden_act)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.dense(x))  # type: ignore[no-any-return]


class _Layer(nn.Module):
    def __init__(self, c: BleurtConfig) -> None:
        super().__init__()
        self.attention = _Attention(c)
        self.intermediate = _Intermediate(c)
        self.output = _Residual(c, c.intermediate_size)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        attended = self.attention(x, mask)
        return self.output(self.intermediate(attended), attended)  # type: ignore[no-any-return]


class _Encoder(nn.Module):
    def __init__(self, c: BleurtConfig) -> None:
        super().__init__()
        self.layer = nn.ModuleList([_Layer(c) for _ in range(c.num_hidden_layers)])
        if c.embedding_size is not None:
            self.embedding_projection = nn.Linear(c.embedding_size, c.hidden_size)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if hasattr(self, "embedding_projection"):
            x = self.embedding_projection(x)
        for layer in self.layer:
            x = layer(x, mask)
        return x


class _Pooler(nn.Module):
    def __init__(self, c: BleurtConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(x[:, 0]))


class _Bleurt(nn.Module):
    def __init__(self, c: BleurtConfig) -> None:
        super().__init__()
        self.embeddings = _Embeddings(c)
        self.encoder = _Encoder(c)
        self.pooler = _Pooler(c)


class BleurtRegressor(nn.Module):
    """`BleurtForSequenceClassification` at inference: the logits of (reference, candidate)."""

    def __init__(self, config: BleurtConfig) -> None:
        super().__init__()
        self.config = config
        self.bleurt = _Bleurt(config)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = self.bleurt.embeddings(input_ids, token_type_ids)
        # The additive mask transformers builds: 0 where attended, the dtype's minimum elsewhere.
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        hidden = self.bleurt.encoder(x, mask)
        return self.classifier(self.bleurt.pooler(hidden))  # type: ignore[no-any-return]


def read_state_dict(folder: Path) -> dict[str, Any]:
    for name in WEIGHT_FILES:
        path = folder / name
        if not path.exists():
            continue
        if name.endswith(".safetensors"):
            from safetensors.torch import load_file

            return dict(load_file(str(path)))
        return dict(torch.load(str(path), map_location="cpu", weights_only=True))
    raise UserError(f"{folder} has no weights ({' or '.join(WEIGHT_FILES)})")


def load_regressor(folder: Path) -> BleurtRegressor:
    """A BLEURT checkpoint folder (config.json + weights) as an eval-mode `BleurtRegressor`."""
    config = BleurtConfig.from_file(folder / "config.json")
    model = BleurtRegressor(config)
    state = {
        k: v
        for k, v in read_state_dict(folder).items()
        if not k.removeprefix("bleurt.").startswith(_BUFFERS)
    }
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        shown = ", ".join([*missing, *unexpected][:4])
        raise UserError(f"{folder} is not a BLEURT regression checkpoint (weights differ: {shown})")
    return model.eval()
