"""Dynamic int8 quantisation of an encoder's linear layers (`quantize=int8`), on the CPU.

torch's dynamic quantisation (`torch.ao.quantization.quantize_dynamic`) stores the weights of
every `torch.nn.Linear` as int8, with one scale per output row (per channel: on the embedded
MiniLM it moved cosines about half as much as one scale per matrix, at the same speed), and
quantises each batch's activations on the fly; embeddings, LayerNorm, attention and pooling
stay in float32. EffEval
(Larionov et al. 2023) found it about 20 % faster than float32 for BERT-base encoders on the
CPU at the same correlation with humans; what it gives here is measured in
tests/benchmarks/bench_quantize.py and recorded in resources/docs/figures.md.

Scores move a little (the weights are rounded), so the option is part of a run's config
hash and of the embedding caches' names: int8 scores and vectors never mix with float ones.
A model with no `torch.nn.Linear` for it to quantise (GPT-2's Conv1D layers, a model that
brings its own kernels) is refused by name, as is a device other than the CPU, where torch
has no dynamic int8 kernels. The plain BERT encoder that runs without transformers
(native_bert) keeps its own linear modules; they are handed over as `torch.nn.Linear`
sharing the same tensors before quantising.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

from meaningbench.errors import UserError

# None (the default): the model's own float weights.
Quantize = Literal["int8"] | None
QUANTIZE_OPTION: dict[str, Any] = {"quantize": None}


def quantize_device_problem(device: str) -> str | None:
    """Why `quantize=int8` cannot run on `device` (resolved or as given), or None."""
    if device.lower() in ("cuda", "mps"):
        return (
            f"quantize=int8 runs on the CPU only (torch has no dynamic int8 kernels for "
            f"{device}); give device=cpu or leave quantize off"
        )
    return None


def quantize_int8(model: Any, name: str) -> Any:
    """`model` with its linear layers in dynamic int8 (changed in place and returned).

    Raises `UserError` naming the model when it has nothing torch can quantise, or when this
    torch build has no quantised CPU engine.
    """
    import torch
    from torch import nn

    engines = [e for e in torch.backends.quantized.supported_engines if e != "none"]
    if not engines:
        raise UserError(
            f"model {name!r} cannot be quantised to int8: this torch build has no "
            "quantised CPU engine; leave quantize off"
        )
    _plain_linears_to_torch(model)
    if not any(type(m) is nn.Linear for m in model.modules()):
        raise UserError(
            f"model {name!r} cannot be quantised to int8: it has no torch.nn.Linear layers "
            "(dynamic quantisation converts only those); leave quantize off"
        )
    with warnings.catch_warnings():
        # torch.ao.quantization warns that it moves to torchao; it still runs, and the
        # warning would reach every user's terminal once per model.
        warnings.simplefilter("ignore")
        quantize_dynamic: Any = torch.ao.quantization.quantize_dynamic  # untyped in torch
        quantized = quantize_dynamic(
            model,
            {nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig},
            dtype=torch.qint8,
            inplace=True,
        )
    return quantized if quantized is not None else model


def _plain_linears_to_torch(model: Any) -> None:
    """Swap modules that declare themselves plain linear layers (`as_torch_linear`) for the
    `torch.nn.Linear` they stand for, which quantisation recognises."""
    for parent in list(model.modules()):
        for child_name, child in list(parent.named_children()):
            convert = getattr(child, "as_torch_linear", None)
            if callable(convert):
                setattr(parent, child_name, convert())


def torch_linear(weight: Any, bias: Any) -> Any:
    """A `torch.nn.Linear` holding `weight` and `bias` as they are (no random
    initialisation first, which would cost a pass over the weights)."""
    from torch import nn

    linear = nn.Linear.__new__(nn.Linear)
    nn.Module.__init__(linear)
    linear.in_features = int(weight.shape[1])
    linear.out_features = int(weight.shape[0])
    linear.weight = weight
    linear.bias = bias
    return linear


def count_int8_linears(model: Any) -> int:
    """How many of the model's layers run as dynamic int8 linear layers."""
    from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear

    return sum(1 for m in model.modules() if isinstance(m, DynamicLinear))
