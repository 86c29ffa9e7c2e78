"""sentence-transformers' `Dense` module: a linear layer with an activation after the
pooling (LaBSE, distiluse and other models project their pooled vector this way), applied
as its `forward` does: act(W·x + b), plus x with `use_residual`. Weights are read from the
module's folder (model.safetensors, or pytorch_model.bin through torch)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from meaningbench.errors import UserError
from meaningbench.metrics.neural.support.model_files import model_file, model_json
from meaningbench.metrics.neural.support.models import ModelRef

# torch.nn activations by their class name, as the module's config names them.
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Tanh": np.tanh,
    "Identity": lambda x: x,
    "ReLU": lambda x: np.maximum(x, np.float32(0)),
    "Sigmoid": lambda x: np.float32(1) / (np.float32(1) + np.exp(-x)),
}
DEFAULT_ACTIVATION = "torch.nn.modules.activation.Tanh"  # Dense's own default


@dataclass(frozen=True, eq=False)
class DenseLayer:
    weight: np.ndarray  # (out, in) float32
    bias: np.ndarray | None
    activation: str
    residual: bool
    digest: str  # of the weights: part of the pooled vectors' cache key

    def __call__(self, vec: Any) -> Any:
        """The layer applied to one pooled vector (numpy, or a torch tensor as given)."""
        x = vec if isinstance(vec, np.ndarray) else vec.detach().cpu().numpy()
        x = x.astype(np.float32, copy=False)
        y = self.weight @ x
        if self.bias is not None:
            y = y + self.bias
        y = ACTIVATIONS[self.activation](y)
        if self.residual:
            y = y + x
        if isinstance(vec, np.ndarray):
            return y
        import torch

        return torch.from_numpy(np.ascontiguousarray(y))


def dense_layer(ref: ModelRef, path: str) -> DenseLayer:
    """The Dense module in `path` of the model, or a UserError naming what is not run."""
    where = f"model {ref.name!r}: its Dense module ({path})"
    config = model_json(ref, f"{path}/config.json") or {}
    activation = str(config.get("activation_function") or DEFAULT_ACTIVATION).rsplit(".", 1)[-1]
    if activation not in ACTIVATIONS:
        raise UserError(
            f"{where} uses the activation {activation}, which sbert_cosine does not run"
        )
    if config.get("module_input_name", "sentence_embedding") != "sentence_embedding":
        raise UserError(f"{where} works on token vectors, which sbert_cosine does not run")
    tensors, digest = _weights(ref, path, where)
    weight = tensors["linear.weight"].astype(np.float32)
    residual = bool(config.get("use_residual", False))
    if residual and weight.shape[0] != weight.shape[1]:
        raise UserError(f"{where} adds a projected residual, which sbert_cosine does not run")
    bias = tensors.get("linear.bias")
    return DenseLayer(
        weight, None if bias is None else bias.astype(np.float32), activation, residual, digest
    )


def _weights(ref: ModelRef, path: str, where: str) -> tuple[dict[str, np.ndarray], str]:
    found = model_file(ref, f"{path}/model.safetensors") or model_file(
        ref, f"{path}/pytorch_model.bin"
    )
    if found is None:
        raise UserError(f"{where} has no weights (model.safetensors or pytorch_model.bin)")
    st = found.stat()
    return _read_weights(str(found), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _read_weights(path: str, size: int, mtime_ns: int) -> tuple[dict[str, np.ndarray], str]:
    """The tensors of a weights file and its digest, once per file as it is now (size and
    modification time in the key): every batch of a run asks for the pooling again."""
    data = Path(path).read_bytes()
    if path.endswith(".safetensors"):
        from safetensors.numpy import load

        return load(data), _digest(data)
    import io

    import torch

    state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    return {k: v.float().numpy() for k, v in state.items()}, _digest(data)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]
