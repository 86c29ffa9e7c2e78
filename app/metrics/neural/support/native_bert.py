"""A BERT encoder in plain torch, read straight from a model folder, without transformers.

Importing transformers' model code and building a model with `from_pretrained` costs more
CPU than any other step of a short scoring run except the forward passes themselves:
`transformers.modeling_utils` alone pulls in `torch.distributed.tensor`, `torch._dynamo`,
sympy and `scipy.optimize`. For the architecture the default encoder has (BERT: MiniLM and
bert-base-sized checkpoints), this module does the same computation with the same weights:
word + token type + position embeddings and LayerNorm, then per layer the self-attention
(`scaled_dot_product_attention`, as transformers' default "sdpa" attention), the output
projection with residual and LayerNorm, and the feed-forward block with exact GELU.
The tokenizer is the folder's `tokenizer.json` run by the `tokenizers` library, which is
what transformers' fast tokenizer runs too. `tests/metrics/neural/support/test_native_bert.py`
compares token ids and every layer's hidden states with transformers' on real sentences.

Only what the metrics call is implemented; anything else asked of the tokenizer (another
argument, another method) is handed to transformers' own tokenizer, built on first use.
A folder that is not a plain BERT encoder (another architecture, other activations,
relative positions, no safetensors or no tokenizer.json) is loaded by transformers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
SPECIAL_TOKENS_MAP = "special_tokens_map.json"
# transformers' model_max_length when the tokenizer config names none.
NO_LIMIT = int(1e30)
# Call arguments the native tokenizer implements; any other goes to transformers'.
_CALL_ARGS = frozenset(
    {"add_special_tokens", "truncation", "max_length", "padding", "return_tensors"}
)
_TRUNCATE = (True, "longest_first", "only_first")
# With pairs `only_first` cuts the first text alone: transformers' tokenizer runs that.
_TRUNCATE_PAIRS = (True, "longest_first")
_PAD = (True, "longest")


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def native_config(folder: Path) -> dict[str, Any] | None:
    """The folder's config when this module can run the model exactly, else None."""
    if not all((folder / name).is_file() for name in (CONFIG, WEIGHTS, TOKENIZER)):
        return None
    try:
        config = _read_json(folder / CONFIG)
        tok_config = _read_json(folder / TOKENIZER_CONFIG)
    except (OSError, ValueError):
        return None
    plain = (
        config.get("model_type") == "bert"
        and config.get("hidden_act", "gelu") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and not config.get("is_decoder", False)
        and not config.get("add_cross_attention", False)
        and tok_config.get("tokenizer_class") in (None, "BertTokenizer", "BertTokenizerFast")
    )
    return config if plain else None


class BertConfigView:
    """The model's config.json as attributes, as code reading `model.config.x` expects."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.__dict__.update(data)
        # transformers' BertConfig defaults, for a config.json saved without them (the
        # weights' shapes are checked against these before anything runs).
        self.vocab_size = int(data.get("vocab_size", 30522))
        self.hidden_size = int(data.get("hidden_size", 768))
        self.num_hidden_layers = int(data.get("num_hidden_layers", 12))
        self.num_attention_heads = int(data.get("num_attention_heads", 12))
        self.intermediate_size = int(data.get("intermediate_size", 3072))
        self.max_position_embeddings = int(data.get("max_position_embeddings", 512))
        self.type_vocab_size = int(data.get("type_vocab_size", 2))
        self.layer_norm_eps = float(data.get("layer_norm_eps", 1e-12))
        # A head's outputs as transformers counts them: its labels, else `num_labels`, else 2.
        labels = data.get("id2label")
        given = len(labels) if isinstance(labels, dict) and labels else data.get("num_labels", 2)
        self.num_labels = int(given)


@dataclass
class EncoderOutput:
    """What `model(...)` returns: `[0]` / `last_hidden_state`, and `hidden_states` when
    asked (the embeddings, then each layer's output)."""

    last_hidden_state: Any
    hidden_states: tuple[Any, ...] | None = None

    def __getitem__(self, index: int) -> Any:
        return (self.last_hidden_state, self.hidden_states)[index]


class MissingWeights(Exception):
    """The checkpoint lacks an encoder parameter or holds one of another shape."""


def build_encoder(config: dict[str, Any], state: dict[str, Any]) -> Any:
    """The encoder made from `state` (parameter name → float32 tensor, transformers' names).

    The modules are built around the loaded tensors: nothing is initialised at random
    first (an initialisation on torch's meta device imports torch._dynamo, over a second).
    Raises `MissingWeights` when a parameter is missing or has another shape; parameters
    it does not use are left out.
    """
    c = BertConfigView(config)
    Linear, LayerNorm, Embedding = _parameter_modules(c, _taker(state))
    Embeddings = _embeddings_module(c, LayerNorm, Embedding)
    Layer = _layer_module(c, Linear, LayerNorm)
    model = _model_class(c, Embeddings, Layer)()
    unused = set(state) - set(model.state_dict())
    if unused:
        raise MissingWeights(f"parameters the encoder does not know: {sorted(unused)[:3]}")
    return model.eval()


def _taker(state: dict[str, Any]) -> Any:
    """`take(name, shape)`: the checkpoint's tensor as a frozen parameter, checked."""
    from torch import nn

    def take(name: str, shape: tuple[int, ...]) -> nn.Parameter:
        tensor = state.get(name)
        if tensor is None or tuple(tensor.shape) != shape:
            raise MissingWeights(name)
        return nn.Parameter(tensor, requires_grad=False)

    return take


def _parameter_modules(c: BertConfigView, take: Any) -> tuple[Any, Any, Any]:
    """The modules that hold parameters: Linear, LayerNorm and Embedding."""
    from torch import nn
    from torch.nn import functional as F

    d = c.hidden_size

    class Linear(nn.Module):
        def __init__(self, prefix: str, n_in: int, n_out: int) -> None:
            super().__init__()
            self.weight = take(f"{prefix}.weight", (n_out, n_in))
            self.bias = take(f"{prefix}.bias", (n_out,))

        def forward(self, x: Any) -> Any:
            return F.linear(x, self.weight, self.bias)

        def as_torch_linear(self) -> Any:
            """The same layer as a `torch.nn.Linear` (what int8 quantisation converts)."""
            from meaningbench.metrics.neural.support.quantize import torch_linear

            return torch_linear(self.weight, self.bias)

    class LayerNorm(nn.Module):
        def __init__(self, prefix: str) -> None:
            super().__init__()
            self.weight = take(f"{prefix}.weight", (d,))
            self.bias = take(f"{prefix}.bias", (d,))

        def forward(self, x: Any) -> Any:
            return F.layer_norm(x, (d,), self.weight, self.bias, c.layer_norm_eps)

    class Embedding(nn.Module):
        def __init__(self, prefix: str, rows: int) -> None:
            super().__init__()
            self.weight = take(f"{prefix}.weight", (rows, d))

        def forward(self, ids: Any) -> Any:
            return F.embedding(ids, self.weight)

    return Linear, LayerNorm, Embedding


def _embeddings_module(c: BertConfigView, LayerNorm: Any, Embedding: Any) -> Any:
    """Word + token type + position embeddings, then LayerNorm."""
    import torch
    from torch import nn

    class Embeddings(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            p = "embeddings"
            self.word_embeddings = Embedding(f"{p}.word_embeddings", c.vocab_size)
            self.position_embeddings = Embedding(
                f"{p}.position_embeddings", c.max_position_embeddings
            )
            self.token_type_embeddings = Embedding(f"{p}.token_type_embeddings", c.type_vocab_size)
            self.LayerNorm = LayerNorm(f"{p}.LayerNorm")

        def forward(self, input_ids: Any, token_type_ids: Any) -> Any:
            positions = torch.arange(input_ids.shape[1], device=input_ids.device)
            # The same order of additions as transformers' BertEmbeddings.
            x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
            x = x + self.position_embeddings(positions)[None]
            return self.LayerNorm(x)

    return Embeddings


def _layer_module(c: BertConfigView, Linear: Any, LayerNorm: Any) -> Any:
    """One transformer layer, its parts named as transformers names them."""
    from torch import nn
    from torch.nn import functional as F

    d = c.hidden_size

    class SelfAttention(nn.Module):
        def __init__(self, prefix: str) -> None:
            super().__init__()
            self.heads = c.num_attention_heads
            self.query = Linear(f"{prefix}.query", d, d)
            self.key = Linear(f"{prefix}.key", d, d)
            self.value = Linear(f"{prefix}.value", d, d)

        def forward(self, x: Any, mask: Any) -> Any:
            b, s, _ = x.shape
            shape = (b, s, self.heads, d // self.heads)
            q = self.query(x).view(shape).transpose(1, 2)
            k = self.key(x).view(shape).transpose(1, 2)
            v = self.value(x).view(shape).transpose(1, 2)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            return out.transpose(1, 2).reshape(b, s, d)

    class Residual(nn.Module):
        """dense, then LayerNorm of (dense output + the block's input)."""

        def __init__(self, prefix: str, width: int) -> None:
            super().__init__()
            self.dense = Linear(f"{prefix}.dense", width, d)
            self.LayerNorm = LayerNorm(f"{prefix}.LayerNorm")

        def forward(self, x: Any, residual: Any) -> Any:
            return self.LayerNorm(self.dense(x) + residual)

    class Attention(nn.Module):
        def __init__(self, prefix: str) -> None:
            super().__init__()
            self.add_module("self", SelfAttention(f"{prefix}.self"))  # transformers' names
            self.output = Residual(f"{prefix}.output", d)

        def forward(self, x: Any, mask: Any) -> Any:
            attend: Any = self._modules["self"]
            return self.output(attend(x, mask), x)

    class Intermediate(nn.Module):
        def __init__(self, prefix: str) -> None:
            super().__init__()
            self.dense = Linear(f"{prefix}.dense", d, c.intermediate_size)

        def forward(self, x: Any) -> Any:
            return F.gelu(self.dense(x))  # exact GELU, transformers' "gelu"

    class Layer(nn.Module):
        def __init__(self, prefix: str) -> None:
            super().__init__()
            self.attention = Attention(f"{prefix}.attention")
            self.intermediate = Intermediate(f"{prefix}.intermediate")
            self.output = Residual(f"{prefix}.output", c.intermediate_size)

        def forward(self, x: Any, mask: Any) -> Any:
            a = self.attention(x, mask)
            return self.output(self.intermediate(a), a)

    return Layer


def _model_class(c: BertConfigView, Embeddings: Any, Layer: Any) -> Any:
    """The whole encoder: embeddings, then the layers, each layer's output kept on request."""
    import torch
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.ModuleList(
                Layer(f"encoder.layer.{i}") for i in range(c.num_hidden_layers)
            )

    class BertEncoderModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = c
            self.embeddings = Embeddings()
            self.encoder = Encoder()

        def forward(
            self,
            input_ids: Any,
            attention_mask: Any = None,
            token_type_ids: Any = None,
            output_hidden_states: bool = False,
        ) -> EncoderOutput:
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(input_ids)
            x = self.embeddings(input_ids, token_type_ids)
            mask = None
            if attention_mask is not None and not bool(attention_mask.all()):
                # Keys that are padding are never attended to (a True entry attends).
                mask = attention_mask.bool()[:, None, None, :]
            states = [x]
            for layer in self.encoder.layer:
                x = layer(x, mask)
                states.append(x)
            return EncoderOutput(x, tuple(states) if output_hidden_states else None)

    return BertEncoderModel


def _state_dict_key(name: str) -> str | None:
    """A checkpoint's parameter name as the encoder names it; None for what it does not use
    (the pooler, a pretraining head, the position-id buffer)."""
    if name.startswith("bert."):
        name = name[len("bert.") :]
    if not name.startswith(("embeddings.", "encoder.")) or name.endswith("position_ids"):
        return None
    # Old TF-converted checkpoints name LayerNorm parameters gamma and beta.
    if name.endswith(".gamma"):
        name = name[: -len("gamma")] + "weight"
    elif name.endswith(".beta"):
        name = name[: -len("beta")] + "bias"
    return name


def load_native_encoder(folder: Path, config: dict[str, Any]) -> Any:
    """The encoder with the folder's weights (float32, CPU, eval mode); None when the weights
    do not fit it exactly (a missing or unknown encoder parameter, another shape)."""
    from safetensors.torch import load_file

    state: dict[str, Any] = {}
    for name, tensor in load_file(str(folder / WEIGHTS)).items():
        key = _state_dict_key(name)
        if key is not None:
            state[key] = tensor.float()
    try:
        return build_encoder(config, state)
    except MissingWeights:
        return None


def _token_content(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


class NativeTokenizer:
    """transformers' fast BERT tokenizer, for the calls the metrics make, on `tokenizers`."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        self.folder = folder
        self._tok = Tokenizer.from_file(str(folder / TOKENIZER))
        # tokenizer.json may carry a fixed padding and truncation (sentence-transformers
        # saves 128): transformers sets both per call, so does this class.
        self._tok.no_padding()
        self._tok.no_truncation()
        self._hf: Any = None
        config = _read_json(folder / TOKENIZER_CONFIG)
        specials = {**_read_json(folder / SPECIAL_TOKENS_MAP), **config}
        self.model_max_length = int(config.get("model_max_length") or NO_LIMIT)
        for role in ("cls", "sep", "pad", "mask", "unk"):
            content = _token_content(specials.get(f"{role}_token"))
            setattr(self, f"{role}_token", content)
            setattr(self, f"{role}_token_id", self._tok.token_to_id(content) if content else None)

    def _transformers_tokenizer(self) -> Any:
        if self._hf is None:
            from transformers import AutoTokenizer

            self._hf = AutoTokenizer.from_pretrained(str(self.folder), local_files_only=True)
        return self._hf

    def __getattr__(self, name: str) -> Any:
        # Only reached for what this class does not define.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._transformers_tokenizer(), name)

    def convert_ids_to_tokens(self, ids: Any) -> Any:
        if isinstance(ids, int):
            return self._tok.id_to_token(ids)
        return [self._tok.id_to_token(int(i)) for i in ids]

    def __call__(self, text: Any, *args: Any, **kwargs: Any) -> Any:
        # A second list pairs each text with another (a cross-encoder's input).
        pairs = list(args[0]) if len(args) == 1 and not isinstance(text, str) else None
        truncate = _TRUNCATE_PAIRS if pairs is not None else _TRUNCATE
        supported = (
            (not args or (pairs is not None and len(pairs) == len(text)))
            and set(kwargs) <= _CALL_ARGS
            and kwargs.get("truncation", False) in (False, None, *truncate)
            and kwargs.get("padding", False) in (False, None, *_PAD)
            and kwargs.get("return_tensors") in (None, "pt")
            and (isinstance(text, str) or all(isinstance(t, str) for t in text))
            and all(isinstance(t, str) for t in pairs or ())
        )
        if not supported:
            return self._transformers_tokenizer()(text, *args, **kwargs)
        single = isinstance(text, str)
        texts: list[Any] = [text] if single else list(text)
        if pairs is not None:
            texts = list(zip(texts, pairs, strict=True))
        max_length = kwargs.get("max_length")
        if kwargs.get("truncation", False) in _TRUNCATE:
            if max_length is None:
                max_length = self.model_max_length
            if max_length < NO_LIMIT:
                self._tok.enable_truncation(int(max_length))
        try:
            encoded = self._tok.encode_batch(
                texts, add_special_tokens=bool(kwargs.get("add_special_tokens", True))
            )
        finally:
            self._tok.no_truncation()
        columns = {
            "input_ids": [e.ids for e in encoded],
            "token_type_ids": [e.type_ids for e in encoded],
            "attention_mask": [e.attention_mask for e in encoded],
        }
        if kwargs.get("padding", False) in _PAD:
            longest = max((len(ids) for ids in columns["input_ids"]), default=0)
            fill = {"input_ids": self.pad_token_id or 0, "token_type_ids": 0, "attention_mask": 0}
            for key, rows in columns.items():
                columns[key] = [row + [fill[key]] * (longest - len(row)) for row in rows]
        if kwargs.get("return_tensors") == "pt":
            import torch

            return {k: torch.tensor(v, dtype=torch.long) for k, v in columns.items()}
        return {k: (v[0] if single else v) for k, v in columns.items()}
