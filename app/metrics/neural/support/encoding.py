"""Contextual token embeddings at one layer, tokenized exactly as bert-score tokenizes.

bert-score strips each sentence, encodes it with special tokens, truncates at the
tokenizer's maximum length, adds a prefix space for RoBERTa/GPT-2 tokenizers and gives an empty
sentence just its special tokens. Matching that is what makes the scores agree to 1e-5.

Where bert-score truncates, a longer text is embedded here in overlapping windows and
stitched back (meaningbench.metrics.neural.support.windows), unless `long_texts="truncate"` is asked
for; a text that fits is one window and is embedded exactly as bert-score embeds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from meaningbench.metrics.neural.support.batching import run_in_batches
from meaningbench.metrics.neural.support.cache import (
    DiskStore,
    Embedding,
    as_array,
    disk_store,
    get_or_compute,
)
from meaningbench.metrics.neural.support.models import LoadedModel, layer_list, layer_view
from meaningbench.metrics.neural.support.onnx_encoder import onnx_part, with_torch
from meaningbench.metrics.neural.support.windows import WindowPlan, plan_windows, stitch
from meaningbench.runtime import CancelToken

# How a text longer than the model's window is embedded (the `long_texts` option).
LongTexts = Literal["windows", "truncate"]


def _needs_prefix_space(tokenizer: Any) -> bool:
    name = type(tokenizer).__name__
    return name.startswith(("Roberta", "GPT2", "Bart", "Longformer"))


def token_ids(
    loaded: LoadedModel, texts: Sequence[str], *, truncate: bool = True
) -> list[list[int]]:
    """Token ids with special tokens, as `bert_score.utils.sent_encode` produces them
    (`truncate=False`: all of them, however long the text)."""
    tok = loaded.tokenizer
    stripped = [t.strip() for t in texts]
    nonempty = [i for i, t in enumerate(stripped) if t]
    # An empty sentence is just its special tokens (bert-score builds them the same way).
    empty = list(tok("", add_special_tokens=True)["input_ids"])
    out: list[list[int]] = [empty for _ in texts]
    if nonempty:
        kwargs: dict[str, Any] = {"add_special_tokens": True}
        if truncate:
            kwargs.update(max_length=loaded.max_length, truncation=True)
        if _needs_prefix_space(tok):
            kwargs["add_prefix_space"] = True
        encoded = tok([stripped[i] for i in nonempty], **kwargs)["input_ids"]
        for i, ids in zip(nonempty, encoded, strict=True):
            out[i] = list(ids)
    return out


def special_ids(loaded: LoadedModel) -> set[int]:
    """The ids bert-score weights 0 without idf: the CLS/BOS and SEP/EOS tokens."""
    tok = loaded.tokenizer
    return {i for i in (tok.cls_token_id, tok.sep_token_id) if i is not None}


def special_frame(tokenizer: Any) -> tuple[int, int]:
    """How many special tokens the tokenizer puts before and after one text's tokens."""
    empty = list(tokenizer("", add_special_tokens=True)["input_ids"])
    one = list(tokenizer("a", add_special_tokens=True)["input_ids"])
    prefix = 0
    while prefix < len(empty) and prefix < len(one) and empty[prefix] == one[prefix]:
        prefix += 1
    return prefix, len(empty) - prefix


def window_length(loaded: LoadedModel) -> int:
    """The most ids one window holds: the tokenizer's limit, and no more than the model's
    position embeddings (a model may have fewer than its tokenizer's configuration says)."""
    positions = getattr(loaded.model.config, "max_position_embeddings", None)
    limit = loaded.max_length
    return min(limit, int(positions)) if isinstance(positions, int) and positions > 0 else limit


def plan_texts(loaded: LoadedModel, ids: Sequence[Sequence[int]], limit: int) -> list[WindowPlan]:
    """Each text's windows of at most `limit` ids."""
    prefix, suffix = special_frame(loaded.tokenizer)
    return [plan_windows(i, limit, prefix, suffix) for i in ids]


def _stitched(plans: Sequence[WindowPlan], embedded: Sequence[Embedding]) -> list[Embedding]:
    """Each text's embedding, stitched from its windows' (in the order the plans hold them)."""
    out: list[Embedding] = []
    at = 0
    for plan in plans:
        parts = [e.vectors for e in embedded[at : at + plan.count]]
        at += plan.count
        out.append(Embedding(plan.ids, stitch(plan, parts)))
    return out


def _windows(plans: Sequence[WindowPlan]) -> list[list[int]]:
    return [list(w) for plan in plans for w in plan.windows]


def embed_windowed(
    plans: Sequence[WindowPlan],
    forward: Callable[[list[list[int]]], list[Embedding]],
    batch_size: int,
    cancel: CancelToken | None,
) -> list[Embedding]:
    """Embed every window of every text in length-sorted batches, and stitch each text."""
    flat = _windows(plans)
    return _stitched(
        plans, run_in_batches(flat, [len(w) for w in flat], forward, batch_size, cancel)
    )


def _plans(loaded: LoadedModel, texts: Sequence[str], long_texts: LongTexts) -> list[WindowPlan]:
    """The windows of `texts`: one per text that fits, several for a longer one unless
    `long_texts="truncate"`."""
    windowed = long_texts == "windows"
    ids = token_ids(loaded, texts, truncate=not windowed)
    limit = window_length(loaded) if windowed else max(len(i) for i in ids)
    return plan_texts(loaded, ids, limit)


def padded(loaded: LoadedModel, batch: list[list[int]]) -> tuple[Any, Any]:
    """(input ids, attention mask) of a batch, right-padded, on the model's device."""
    import torch

    arrays = padded_arrays(loaded, batch)
    return (
        torch.from_numpy(arrays["ids"]).to(loaded.device),
        torch.from_numpy(arrays["mask"]).to(loaded.device),
    )


def padded_arrays(loaded: LoadedModel, batch: list[list[int]]) -> dict[str, Any]:
    """`padded` as numpy int64 arrays named as ONNX Runtime's inputs (`ids`, `mask`)."""
    import numpy as np

    tok = loaded.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    longest = max(len(ids) for ids in batch)
    input_ids = np.full((len(batch), longest), pad, dtype=np.int64)
    mask = np.zeros((len(batch), longest), dtype=np.int64)
    for row, ids in enumerate(batch):
        input_ids[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1
    return {"ids": input_ids, "mask": mask}


def unit_rows(hidden: Any) -> Any:
    """Each token vector of a float32 numpy batch divided by its length."""
    import numpy as np

    hidden = hidden.astype(np.float32, copy=False)
    return hidden / np.linalg.norm(hidden, axis=-1, keepdims=True)


def _forward_layer_arrays(
    loaded: LoadedModel, layer: int, batch: list[list[int]]
) -> list[Embedding] | None:
    """`_forward_layer` in numpy, for a record without torch; None when ONNX Runtime
    cannot run the layer after all (its export failed: torch runs it)."""
    runner = onnx_part(loaded, f"L{layer}")
    if runner is None:
        return None
    hidden = unit_rows(runner.arrays(padded_arrays(loaded, batch)))
    return [Embedding(tuple(ids), hidden[row, : len(ids)].copy()) for row, ids in enumerate(batch)]


def _forward_layer(loaded: LoadedModel, layer: int, batch: list[list[int]]) -> list[Embedding]:
    if loaded.torchless:
        found = _forward_layer_arrays(loaded, layer, batch)
        if found is not None:
            return found
        # Its export could not be rebuilt (said in one line): torch runs it, as it does
        # for a record with a torch model.
        done = _forward_layer(with_torch(loaded), layer, batch)
        return [Embedding(e.ids, as_array(e.vectors)) for e in done]
    import torch

    input_ids, mask = padded(loaded, batch)
    runner = onnx_part(loaded, f"L{layer}")
    view = layer_view(loaded, layer) if runner is None else None
    with torch.inference_mode():
        if runner is not None:
            hidden = runner(input_ids, mask)
        elif view is not None:
            hidden = view(input_ids, attention_mask=mask)[0]
        else:
            out = loaded.model(input_ids, attention_mask=mask, output_hidden_states=True)
            hidden = out.hidden_states[layer]
        hidden = hidden.float()
        hidden = hidden / hidden.norm(dim=-1, keepdim=True)
        hidden = hidden.cpu()
    return [Embedding(tuple(ids), hidden[row, : len(ids)].clone()) for row, ids in enumerate(batch)]


def _layer_caches(
    loaded: LoadedModel, layer: int, disk_mb: float, long_texts: LongTexts
) -> tuple[str, DiskStore | None]:
    """The memory namespace and the disk store of one layer's token embeddings."""
    # Windowed embeddings of long texts differ from truncated ones: cached apart.
    tag = "-w" if long_texts == "windows" else ""
    namespace = f"{loaded.ref.fingerprint()}|{loaded.numerics}|L{layer}{tag}"
    disk = disk_store(
        loaded.ref.key, loaded.ref.fingerprint(), f"{loaded.numerics}-L{layer}{tag}", disk_mb
    )
    return namespace, disk


def token_embeddings(
    loaded: LoadedModel,
    layer: int,
    texts: Sequence[str],
    *,
    batch_size: int = 64,
    cancel: CancelToken | None = None,
    disk_mb: float = 0,
    persist: set[str] | None = None,
    long_texts: LongTexts = "windows",
) -> dict[str, Embedding]:
    """Normalised token embeddings of the distinct `texts` at `layer`, through the caches."""
    namespace, disk = _layer_caches(loaded, layer, disk_mb, long_texts)

    def compute(missing: list[str]) -> list[Embedding]:
        return embed_windowed(
            _plans(loaded, missing, long_texts),
            lambda b: _forward_layer(loaded, layer, b),
            batch_size,
            cancel,
        )

    keep = (lambda t: t in persist) if persist is not None else None
    return get_or_compute(namespace, texts, compute, disk, keep, numpy=loaded.torchless)


# --- several layers from one forward pass (the model/layer sweep) ---------------------------


def hidden_states_at(loaded: LoadedModel, layers: Sequence[int], **inputs: Any) -> dict[int, Any]:
    """Hidden states `layers` (0 = embeddings) of one pass through the encoder cut after the
    highest of them: that cut's output, and what its layers below handed on.

    The states are taken with hooks on the layers of the cut rather than with
    `output_hidden_states`: transformers ≥ 5 records those with hooks it installs once per
    model object, and a cut shares its layers with the model, so they would record twice.
    """
    top = max(layers)
    view = layer_view(loaded, top)
    if view is None:  # no plain layer list: the whole model, as the one-layer path runs it
        states = loaded.model(**inputs, output_hidden_states=True).hidden_states
        return {layer: states[layer] for layer in layers}
    blocks = layer_list(view)
    captured: dict[int, Any] = {}

    def before_first(module: Any, args: tuple[Any, ...]) -> None:
        captured[0] = args[0]

    def after(index: int) -> Callable[[Any, Any, Any], None]:
        def hook(module: Any, args: Any, output: Any) -> None:
            captured[index] = output[0] if isinstance(output, tuple) else output

        return hook

    handles = []
    if blocks is not None and len(blocks) > 0:
        handles.append(blocks[0].register_forward_pre_hook(before_first))
        handles.extend(b.register_forward_hook(after(i)) for i, b in enumerate(blocks, 1))
    try:
        captured[top] = view(**inputs)[0]  # the cut's output, as the one-layer path takes it
    finally:
        for handle in handles:
            handle.remove()
    return {layer: captured[layer] for layer in layers}


def _forward_layers(
    loaded: LoadedModel, layers: Sequence[int], batch: list[list[int]]
) -> list[dict[int, Embedding]]:
    """Per sequence of the batch, its normalised token embeddings at each of `layers`, from
    one forward pass."""
    import torch

    input_ids, mask = padded(loaded, batch)
    with torch.inference_mode():
        states = hidden_states_at(loaded, layers, input_ids=input_ids, attention_mask=mask)
        per_layer = {}
        for layer in layers:
            hidden = states[layer].float()
            per_layer[layer] = (hidden / hidden.norm(dim=-1, keepdim=True)).cpu()
    return [
        {
            layer: Embedding(tuple(ids), hidden[row, : len(ids)].clone())
            for layer, hidden in per_layer.items()
        }
        for row, ids in enumerate(batch)
    ]


def checked_layers(loaded: LoadedModel, layers: Sequence[int]) -> list[int]:
    """The distinct `layers`, lowest first; an out-of-range one fails here, before any work."""
    wanted = sorted(dict.fromkeys(int(layer) for layer in layers))
    for layer in wanted:
        layer_view(loaded, layer)
    return wanted


def layers_through_caches(
    texts: Sequence[str],
    layers: Sequence[int],
    caches: Callable[[int], tuple[str, DiskStore | None]],
    encode: Callable[[list[str]], list[dict[int, Embedding]]],
    keep: Callable[[str], bool] | None = None,
) -> dict[int, dict[str, Embedding]]:
    """Per layer of `layers`, the vectors of `texts` through that layer's caches, each
    text that any cache lacks encoded once for all layers.

    Each layer's cache is asked in turn; `encode` turns the texts not yet encoded here into
    their vectors at every layer, and the other layers' vectors are held until their own
    cache asks for them.
    """
    encoded: dict[str, dict[int, Embedding]] = {}

    def compute_for(layer: int) -> Callable[[list[str]], list[Embedding]]:
        def compute(missing: list[str]) -> list[Embedding]:
            new = [t for t in missing if t not in encoded]
            if new:
                encoded.update(zip(new, encode(new), strict=True))
            return [encoded[t][layer] for t in missing]

        return compute

    out: dict[int, dict[str, Embedding]] = {}
    for layer in layers:
        namespace, disk = caches(layer)
        out[layer] = get_or_compute(namespace, texts, compute_for(layer), disk, keep)
    return out


def token_embeddings_layers(
    loaded: LoadedModel,
    layers: Sequence[int],
    texts: Sequence[str],
    *,
    batch_size: int = 64,
    cancel: CancelToken | None = None,
    disk_mb: float = 0,
    persist: set[str] | None = None,
    long_texts: LongTexts = "windows",
) -> dict[int, dict[str, Embedding]]:
    """`token_embeddings` at every one of `layers`, through the same caches, each text
    encoded once for all of them.

    Each layer's cache is asked in turn; the texts one of them lacks are encoded once with
    every hidden state kept, and the other layers' vectors of those texts are held here
    until their own cache asks for them. What lands in the caches is what the one-layer path
    would have put there, so a later run of one layer finds it.
    """
    wanted = checked_layers(loaded, layers)

    def encode(new: list[str]) -> list[dict[int, Embedding]]:
        plans = _plans(loaded, new, long_texts)
        flat = _windows(plans)
        found = run_in_batches(
            flat,
            [len(w) for w in flat],
            lambda b: _forward_layers(loaded, wanted, b),
            batch_size,
            cancel,
        )
        per_layer = {w: _stitched(plans, [f[w] for f in found]) for w in wanted}
        return [{w: per_layer[w][row] for w in wanted} for row in range(len(new))]

    keep = (lambda t: t in persist) if persist is not None else None
    return layers_through_caches(
        texts,
        wanted,
        lambda layer: _layer_caches(loaded, layer, disk_mb, long_texts),
        encode,
        keep,
    )
