"""Sentence-embedding cosine (Reimers & Gurevych 2019) with the model's own pooling config.

A sentence-transformers model says how to pool (`modules.json` → the Pooling module's
`config.json`), how long inputs may be and whether to lowercase (`sentence_bert_config.json`)
and whether a `Dense` layer projects the pooled vector (`st_dense`): its folder's files, or
a hub model's, fetched beside its weights. A plain Hugging Face model gets mean pooling.
Cosine ignores the final normalisation, so the score equals
`SentenceTransformer(path).encode` + cosine. value = 100·max(0, cos).

Long texts: sentence-transformers cuts a text at `max_seq_length` (256 tokens for MiniLM)
and pools only that beginning. Here a longer text is embedded in overlapping windows of
that length, the token vectors are stitched back (each token from the window where it is
most central, see meaningbench.metrics.neural.support.windows) and the pooling runs over all the
stitched tokens, as if the model had seen the text whole. A text that fits is embedded
exactly as sentence-transformers embeds it. `long_texts="truncate"` cuts as it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from meaningbench.errors import UserError
from meaningbench.metrics.base import ItemScore, MetricInfo, Pair
from meaningbench.metrics.neural.support.batching import run_in_batches
from meaningbench.metrics.neural.support.cache import (
    DEFAULT_DISK_MB,
    DiskStore,
    Embedding,
    as_array,
    disk_store,
    get_or_compute,
    is_array,
)
from meaningbench.metrics.neural.support.common import ENCODER_OPTIONS, NeuralMetric
from meaningbench.metrics.neural.support.encoding import (
    LongTexts,
    checked_layers,
    embed_windowed,
    hidden_states_at,
    layers_through_caches,
    padded,
    padded_arrays,
    plan_texts,
    special_frame,
    window_length,
)
from meaningbench.metrics.neural.support.model_files import model_json
from meaningbench.metrics.neural.support.models import LoadedModel, ModelRef
from meaningbench.metrics.neural.support.onnx_encoder import onnx_part, with_torch
from meaningbench.metrics.neural.support.st_dense import DenseLayer, dense_layer
from meaningbench.metrics.neural.support.windows import WindowPlan, count_windows, window_stride
from meaningbench.runtime import CancelToken
from meaningbench.settings import DEFAULT_ENCODER

POOLING_ORDER = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")


@dataclass(frozen=True)
class PoolingConfig:
    modes: tuple[str, ...] = ("mean",)
    max_seq_length: int | None = None
    do_lower_case: bool = False
    dense: tuple[DenseLayer, ...] = ()  # sentence-transformers' Dense modules, in order

    def finish(self, pooled: Any) -> Any:
        """The sentence vector of a pooled one: through the Dense modules, unit length."""
        for layer in self.dense:
            pooled = layer(pooled)
        return _unit(pooled)

    @property
    def key(self) -> str:
        """What the pooled vectors' caches are named by."""
        dense = "".join(f"-dense{layer.digest}" for layer in self.dense)
        return f"pooled-{'+'.join(self.modes)}-{self.max_seq_length}{dense}"

    @classmethod
    def of_model(cls, ref: ModelRef) -> PoolingConfig:
        """The pooling a sentence-transformers model says (its folder's files, or a hub
        model's, fetched beside its weights); mean pooling for a plain model."""
        modules = model_json(ref, "modules.json") or []
        transformer_dir, pooling_dir = "", None
        dense: list[DenseLayer] = []
        for module in modules:
            kind = str(module.get("type", ""))
            path = str(module.get("path", ""))
            if kind.endswith("Transformer"):
                transformer_dir = path
            elif kind.endswith("Pooling"):
                pooling_dir = path
            elif kind.endswith("Dense"):
                dense.append(dense_layer(ref, path))
            elif not kind.endswith("Normalize"):  # cosine ignores the normalisation
                raise UserError(
                    f"model {ref.name!r}: its sentence-transformers module {kind} ({path}) "
                    "is not one sbert_cosine runs (it runs the transformer, the pooling, "
                    "Dense layers and the normalisation), so its cosine would not be "
                    "sentence-transformers'"
                )
        st_config = model_json(ref, _joined(transformer_dir, "sentence_bert_config.json")) or {}
        pooling = model_json(ref, _joined(pooling_dir, "config.json")) if pooling_dir else None
        return cls(
            modes=_pooling_modes(pooling) if pooling else ("mean",),
            max_seq_length=st_config.get("max_seq_length"),
            do_lower_case=bool(st_config.get("do_lower_case", False)),
            dense=tuple(dense),
        )


def _joined(folder: str, name: str) -> str:
    return f"{folder.strip('/')}/{name}" if folder.strip("/") else name


def _pooling_modes(config: dict[str, Any]) -> tuple[str, ...]:
    mode = config.get("pooling_mode")  # newer sentence-transformers: a name or a list
    if isinstance(mode, str):
        return (mode,)
    if isinstance(mode, list) and mode:
        return tuple(str(m) for m in mode)
    flags = {
        "cls": config.get("pooling_mode_cls_token"),
        "max": config.get("pooling_mode_max_tokens"),
        "mean": config.get("pooling_mode_mean_tokens"),
        "mean_sqrt_len_tokens": config.get("pooling_mode_mean_sqrt_len_tokens"),
        "weightedmean": config.get("pooling_mode_weightedmean_tokens"),
        "lasttoken": config.get("pooling_mode_lasttoken"),
    }
    modes = tuple(m for m in POOLING_ORDER if flags.get(m))
    return modes or ("mean",)


def _pool_array(tokens: Any, modes: Sequence[str]) -> Any:
    """`pool` of a numpy array."""
    import numpy as np

    n = tokens.shape[0]
    parts = []
    for mode in modes:
        if mode == "cls":
            parts.append(tokens[0])
        elif mode == "max":
            parts.append(tokens.max(axis=0))
        elif mode == "mean":
            parts.append(tokens.sum(axis=0) / np.float32(max(n, 1e-9)))
        elif mode == "mean_sqrt_len_tokens":
            parts.append(tokens.sum(axis=0) / np.float32(max(n, 1e-9) ** 0.5))
        elif mode == "weightedmean":
            w = np.arange(1, n + 1, dtype=tokens.dtype)[:, None]
            parts.append((tokens * w).sum(axis=0) / w.sum())
        elif mode == "lasttoken":
            parts.append(tokens[-1])
        else:
            raise ValueError(f"unknown pooling mode {mode!r}")
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _unit(vec: Any) -> Any:
    """A pooled vector divided by its length (at least 1e-12), a copy."""
    if is_array(vec):
        import numpy as np

        return vec / np.maximum(np.linalg.norm(vec), np.float32(1e-12))
    return (vec / vec.norm().clamp_min(1e-12)).clone()


def pool(tokens: Any, modes: Sequence[str]) -> Any:
    """Pool one sentence's unpadded token embeddings [n, d] into one vector (a torch
    tensor, or a numpy array where torch is not used)."""
    if is_array(tokens):
        return _pool_array(tokens, modes)
    import torch

    n = tokens.shape[0]
    parts = []
    for mode in modes:
        if mode == "cls":
            parts.append(tokens[0])
        elif mode == "max":
            parts.append(tokens.max(dim=0).values)
        elif mode == "mean":
            parts.append(tokens.sum(dim=0) / max(n, 1e-9))
        elif mode == "mean_sqrt_len_tokens":
            parts.append(tokens.sum(dim=0) / (max(n, 1e-9) ** 0.5))
        elif mode == "weightedmean":
            w = torch.arange(1, n + 1, dtype=tokens.dtype).unsqueeze(1)
            parts.append((tokens * w).sum(dim=0) / w.sum())
        elif mode == "lasttoken":
            parts.append(tokens[-1])
        else:
            raise ValueError(f"unknown pooling mode {mode!r}")
    return torch.cat(parts) if len(parts) > 1 else parts[0]


def _encode(loaded: LoadedModel, pooling: PoolingConfig, texts: list[str]) -> dict[str, Any]:
    inputs = [t.lower() for t in texts] if pooling.do_lower_case else texts
    max_len = min(pooling.max_seq_length or loaded.max_length, loaded.max_length)
    enc = loaded.tokenizer(
        inputs, padding=True, truncation="longest_first", max_length=max_len, return_tensors="pt"
    )
    return {k: v.to(loaded.device) for k, v in enc.items()}


def _pooled_rows(hidden: Any, lengths: list[int], pooling: PoolingConfig) -> list[Embedding]:
    return [
        Embedding((), pooling.finish(pool(hidden[row, : int(n)], pooling.modes)))
        for row, n in enumerate(lengths)
    ]


def _hidden_arrays(loaded: LoadedModel, batch: list[list[int]], layer: int | None) -> Any:
    """The hidden state (the output, or `layer`) of id sequences as a numpy array, in
    ONNX Runtime for a record without torch; None when its export cannot run after all."""
    runner = onnx_part(loaded, f"L{loaded.num_layers if layer is None else layer}")
    if runner is None:
        return None
    return runner.arrays(padded_arrays(loaded, batch)).astype("float32", copy=False)


def _as_arrays(found: list[Embedding]) -> list[Embedding]:
    """Torch's vectors for a record without torch whose export could not be rebuilt."""
    return [Embedding(e.ids, as_array(e.vectors)) for e in found]


def _forward_pooled(
    loaded: LoadedModel, pooling: PoolingConfig, texts: list[str], layer: int | None = None
) -> list[Embedding]:
    """Pooled vectors of the model's output, or of hidden state `layer` (0 = embeddings)."""
    if loaded.torchless:
        inputs = [t.lower() for t in texts] if pooling.do_lower_case else texts
        max_len = min(pooling.max_seq_length or loaded.max_length, loaded.max_length)
        enc = loaded.tokenizer(inputs, truncation="longest_first", max_length=max_len)
        ids = [list(i) for i in enc["input_ids"]]
        hidden = _hidden_arrays(loaded, ids, layer)
        if hidden is not None:
            return _pooled_rows(hidden, [len(i) for i in ids], pooling)
        return _as_arrays(_forward_pooled(with_torch(loaded), pooling, texts, layer))
    import torch

    cut = onnx_part(loaded, f"L{layer}") if layer is not None else None
    if layer is not None and cut is None:
        return [v[layer] for v in _forward_pooled_layers(loaded, pooling, texts, [layer])]
    enc = _encode(loaded, pooling, texts)
    with torch.inference_mode():
        if cut is not None:  # ONNX Runtime runs the encoder cut after that layer
            hidden = cut(enc["input_ids"], enc["attention_mask"])
        else:
            hidden = _output(loaded, enc)
        hidden = hidden.float().cpu()
    return _pooled_rows(hidden, enc["attention_mask"].sum(dim=1).tolist(), pooling)


def _output(loaded: LoadedModel, enc: dict[str, Any]) -> Any:
    """The model's last hidden state, through ONNX Runtime when it runs the model."""
    runner = onnx_part(loaded, f"L{loaded.num_layers}")
    if runner is not None:
        return runner(enc["input_ids"], enc["attention_mask"])
    return loaded.model(**enc)[0]


def _forward_pooled_layers(
    loaded: LoadedModel, pooling: PoolingConfig, texts: list[str], layers: Sequence[int]
) -> list[dict[int, Embedding]]:
    """Per text, its pooled vector at each of `layers`, from one forward pass."""
    import torch

    enc = _encode(loaded, pooling, texts)
    lengths = enc["attention_mask"].sum(dim=1).tolist()
    with torch.inference_mode():
        states = hidden_states_at(loaded, layers, **enc)
        pooled = {
            layer: _pooled_rows(states[layer].float().cpu(), lengths, pooling) for layer in layers
        }
    return [{layer: pooled[layer][row] for layer in layers} for row in range(len(texts))]


def _forward_hidden(
    loaded: LoadedModel, batch: list[list[int]], layer: int | None = None
) -> list[Embedding]:
    """The last hidden state (or hidden state `layer`) of each id sequence (one window of a
    long text), unpadded."""
    if loaded.torchless:
        found = _hidden_arrays(loaded, batch, layer)
        if found is None:
            return _as_arrays(_forward_hidden(with_torch(loaded), batch, layer))
        return [
            Embedding(tuple(ids), found[row, : len(ids)].copy()) for row, ids in enumerate(batch)
        ]
    import torch

    input_ids, mask = padded(loaded, batch)
    inputs = {"input_ids": input_ids, "attention_mask": mask}
    cut = onnx_part(loaded, f"L{layer}") if layer is not None else None
    with torch.inference_mode():
        if layer is None:
            hidden = _output(loaded, inputs)
        elif cut is not None:
            hidden = cut(input_ids, mask)
        else:
            hidden = hidden_states_at(loaded, [layer], **inputs)[layer]
        hidden = hidden.float().cpu()
    return [Embedding(tuple(ids), hidden[row, : len(ids)].clone()) for row, ids in enumerate(batch)]


def window_limit(loaded: LoadedModel, pooling: PoolingConfig) -> int:
    """The ids one window holds: the sentence-transformers limit, within the model's."""
    return min(pooling.max_seq_length or loaded.max_length, window_length(loaded))


def pooled_ids(
    loaded: LoadedModel, pooling: PoolingConfig, texts: Sequence[str]
) -> list[list[int]]:
    """Every token id of each text (special tokens included), as the model is fed them."""
    inputs = [t.lower() for t in texts] if pooling.do_lower_case else list(texts)
    return [list(i) for i in loaded.tokenizer(inputs, add_special_tokens=True)["input_ids"]]


def _long_plans(
    loaded: LoadedModel, pooling: PoolingConfig, texts: Sequence[str]
) -> tuple[list[int], list[int], list[WindowPlan], list[int]]:
    """Which texts fit one window, which do not, the windows of those that do not, and
    every text's token count."""
    limit = window_limit(loaded, pooling)
    ids = pooled_ids(loaded, pooling, texts)
    short = [i for i, x in enumerate(ids) if len(x) <= limit]
    long = [i for i, x in enumerate(ids) if len(x) > limit]
    return short, long, plan_texts(loaded, [ids[i] for i in long], limit), [len(x) for x in ids]


def _pooled_stitched(emb: Embedding, pooling: PoolingConfig) -> Embedding:
    return Embedding((), pooling.finish(pool(emb.vectors, pooling.modes)))


def _pooled_with_windows(
    loaded: LoadedModel,
    pooling: PoolingConfig,
    texts: list[str],
    batch_size: int,
    cancel: CancelToken | None,
    layer: int | None = None,
) -> list[Embedding]:
    """Texts that fit as sentence-transformers embeds them; longer ones windowed, stitched
    and pooled over all their tokens."""
    short, long, plans, lengths = _long_plans(loaded, pooling, texts)
    out: list[Embedding | None] = [None] * len(texts)
    if short:
        done = run_in_batches(
            [texts[i] for i in short],
            [lengths[i] for i in short],
            lambda b: _forward_pooled(loaded, pooling, b, layer),
            batch_size,
            cancel,
        )
        for i, emb in zip(short, done, strict=True):
            out[i] = emb
    if long:
        stitched = embed_windowed(
            plans, lambda b: _forward_hidden(loaded, b, layer), batch_size, cancel
        )
        for i, emb in zip(long, stitched, strict=True):
            out[i] = _pooled_stitched(emb, pooling)
    return [e for e in out if e is not None]


def pooling_config(loaded: LoadedModel) -> PoolingConfig:
    return PoolingConfig.of_model(loaded.ref)


def _pooled_caches(
    loaded: LoadedModel,
    pooling: PoolingConfig,
    layer: int | None,
    disk_mb: float,
    long_texts: LongTexts,
) -> tuple[str, DiskStore | None]:
    """The memory namespace and disk store of pooled vectors (of the output, or a layer)."""
    what = f"{loaded.numerics}-{pooling.key}"
    if long_texts == "windows":
        what += "-w"  # windowed vectors of long texts differ from truncated ones
    if layer is not None:
        what += f"-L{layer}"
    namespace = f"{loaded.ref.fingerprint()}|{what}"
    return namespace, disk_store(loaded.ref.key, loaded.ref.fingerprint(), what, disk_mb)


def sentence_vectors(
    loaded: LoadedModel,
    texts: Sequence[str],
    *,
    batch_size: int = 64,
    cancel: CancelToken | None = None,
    disk_mb: float = 0,
    long_texts: LongTexts = "windows",
    layer: int | None = None,
) -> dict[str, Embedding]:
    """Unit-length pooled sentence vectors of the distinct `texts`, through the caches;
    `layer` pools that hidden state instead of the model's output."""
    pooling = pooling_config(loaded)
    namespace, disk = _pooled_caches(loaded, pooling, layer, disk_mb, long_texts)

    def compute(missing: list[str]) -> list[Embedding]:
        if long_texts == "windows":
            return _pooled_with_windows(loaded, pooling, missing, batch_size, cancel, layer)
        lengths = [len(t) for t in missing]  # characters: a cheap proxy for token length
        return run_in_batches(
            missing,
            lengths,
            lambda b: _forward_pooled(loaded, pooling, b, layer),
            batch_size,
            cancel,
        )

    return get_or_compute(namespace, texts, compute, disk, numpy=loaded.torchless)


def window_counts(
    loaded: LoadedModel, texts: Sequence[str]
) -> tuple[dict[str, tuple[int, int]], int]:
    """Per distinct text: (tokens, windows) as `sentence_vectors` embeds it; and the stride
    its windows start at."""
    pooling = pooling_config(loaded)
    limit = window_limit(loaded, pooling)
    prefix, suffix = special_frame(loaded.tokenizer)
    distinct = list(dict.fromkeys(texts))
    counts = {
        text: (len(ids), count_windows(len(ids), limit, prefix, suffix))
        for text, ids in zip(distinct, pooled_ids(loaded, pooling, distinct), strict=True)
    }
    return counts, window_stride(limit - prefix - suffix)


def _pooled_layers_windowed(
    loaded: LoadedModel,
    pooling: PoolingConfig,
    texts: list[str],
    layers: Sequence[int],
    batch_size: int,
    cancel: CancelToken | None,
) -> list[dict[int, Embedding]]:
    """Per text, its pooled vector at each of `layers`; texts that fit from one pass for all
    layers, longer ones windowed layer by layer."""
    short, long, _, lengths = _long_plans(loaded, pooling, texts)
    out: list[dict[int, Embedding]] = [{} for _ in texts]
    if short:
        found = run_in_batches(
            [texts[i] for i in short],
            [lengths[i] for i in short],
            lambda b: _forward_pooled_layers(loaded, pooling, b, layers),
            batch_size,
            cancel,
        )
        for i, vectors in zip(short, found, strict=True):
            out[i] = vectors
    for layer in layers if long else ():
        pooled = _pooled_with_windows(
            loaded, pooling, [texts[i] for i in long], batch_size, cancel, layer
        )
        for i, emb in zip(long, pooled, strict=True):
            out[i][layer] = emb
    return out


def sentence_vectors_layers(
    loaded: LoadedModel,
    layers: Sequence[int],
    texts: Sequence[str],
    *,
    batch_size: int = 64,
    cancel: CancelToken | None = None,
    disk_mb: float = 0,
    long_texts: LongTexts = "windows",
) -> dict[int, dict[str, Embedding]]:
    """`sentence_vectors(layer=L)` for every L of `layers`, through the same caches, each
    text that fits the model encoded once for all of them (see
    `encoding.token_embeddings_layers`)."""
    wanted = checked_layers(loaded, layers)
    pooling = pooling_config(loaded)

    def encode(new: list[str]) -> list[dict[int, Embedding]]:
        if long_texts == "windows":
            return _pooled_layers_windowed(loaded, pooling, new, wanted, batch_size, cancel)
        return run_in_batches(
            new,
            [len(t) for t in new],
            lambda b: _forward_pooled_layers(loaded, pooling, b, wanted),
            batch_size,
            cancel,
        )

    return layers_through_caches(
        texts,
        wanted,
        lambda layer: _pooled_caches(loaded, pooling, layer, disk_mb, long_texts),
        encode,
    )


class SentenceCosineMetric(NeuralMetric):
    info = MetricInfo(
        name="sbert_cosine",
        label="SBERT cosine",
        family="neural",
        description="Cosine similarity of pooled sentence embeddings of source and output.",
        needs_model=True,
        reference="sentence-transformers SentenceTransformer.encode + cosine",
        parity_test="tests/metrics/neural/test_sbert.py::test_equals_sentence_transformers",
    )
    defaults = {
        "model": DEFAULT_ENCODER,
        "layer": None,  # None = the model's output; N = hidden state N (0 = embeddings)
        "embedding_cache_mb": DEFAULT_DISK_MB,
        "long_texts": "windows",
        **ENCODER_OPTIONS,
    }
    option_types: ClassVar[dict[str, Any]] = {
        **NeuralMetric.option_types,
        "long_texts": LongTexts,
    }
    # Added after scores existed: runs of the model's output keep their config hash.
    hashed_when_set: ClassVar[frozenset[str]] = frozenset({"layer", "quantize"})

    def onnx_part(self) -> str:
        """The encoder cut after the pooled layer (the model's output: its last)."""
        layer = self.layer()
        if layer is None:
            from meaningbench.metrics.neural.bertscore import num_layers_from_config

            layer = num_layers_from_config(self.model_name() or DEFAULT_ENCODER)
        return f"L{layer}"

    def layer(self) -> int | None:
        value = self.config.get("layer")
        return None if value is None else int(value)

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if not pairs:
            return []
        loaded = self.scoring_model()
        vectors = sentence_vectors(
            loaded,
            [p.source for p in pairs] + [p.output for p in pairs],
            batch_size=int(self.config["batch_size"]),
            cancel=cancel,
            disk_mb=float(self.config.get("embedding_cache_mb") or 0),
            long_texts=self.config["long_texts"],
            layer=self.layer(),
        )
        counts, stride = None, 0
        if self.config["long_texts"] == "windows":
            counts, stride = window_counts(loaded, [t for p in pairs for t in (p.source, p.output)])
        onnx = loaded.backend == "onnx"
        out = []
        for pair in pairs:
            cos = float(vectors[pair.source].vectors @ vectors[pair.output].vectors)
            details: dict[str, Any] = {"cosine": cos}
            if onnx:  # what `explain` says ran the encoder (torch when absent)
                details["backend"] = "onnx"
            if counts is not None:
                src, hyp = counts[pair.source], counts[pair.output]
                details["tokens"] = {"source": src[0], "output": hyp[0]}
                details["windows"] = {"source": src[1], "output": hyp[1]}
                if max(src[1], hyp[1]) > 1:
                    details["window_stride"] = stride
            out.append(ItemScore(value=100.0 * max(0.0, cos), raw=cos, details=details))
        return out
