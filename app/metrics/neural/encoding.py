"""Contextual token embeddings at one layer, tokenized exactly as bert-score tokenizes.

bert-score strips each sentence, encodes it with special tokens, truncates at the
tokenizer's maximum length, adds a prefix space for RoBERTa/GPT-2 tokenizers and gives an empty
sentence just its special tokens. Matching that is what makes the scores agree to 1e-5.

Where bert-score truncates, a longer text is embedded here in overlapping windows and
stitched back (meaningbench.metrics.neural.windows), unless `long_texts="truncate"` is asked
for; a text that fits is one window and is embedded exactly as bert-score embeds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from meaningbench.metrics.neural.batching import run_in_batches
from meaningbench.metrics.neural.cache import Embedding, disk_store, get_or_compute
from meaningbench.metrics.neural.models import LoadedModel, layer_view
from meaningbench.metrics.neural.windows import WindowPlan, plan_windows, stitch
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


def embed_windowed(
    plans: Sequence[WindowPlan],
    forward: Callable[[list[list[int]]], list[Embedding]],
    batch_size: int,
    cancel: CancelToken | None,
) -> list[Embedding]:
    """Embed every window of every text in length-sorted batches, and stitch each text."""
    flat = [list(w) for plan in plans for w in plan.windows]
    embedded = run_in_batches(flat, [len(w) for w in flat], forward, batch_size, cancel)
    out: list[Embedding] = []
    at = 0
    for plan in plans:
        parts = [e.vectors for e in embedded[at : at + plan.count]]
        at += plan.count
        out.append(Embedding(plan.ids, stitch(plan, parts)))
    return out


def _forward_layer(loaded: LoadedModel, layer: int, batch: list[list[int]]) -> list[Embedding]:
    import torch

    tok = loaded.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    longest = max(len(ids) for ids in batch)
    input_ids = torch.full((len(batch), longest), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), longest), dtype=torch.long)
    for row, ids in enumerate(batch):
        input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        mask[row, : len(ids)] = 1
    input_ids = input_ids.to(loaded.device)
    mask = mask.to(loaded.device)
    view = layer_view(loaded, layer)
    with torch.inference_mode():
        if view is not None:
            hidden = view(input_ids, attention_mask=mask)[0]
        else:
            out = loaded.model(input_ids, attention_mask=mask, output_hidden_states=True)
            hidden = out.hidden_states[layer]
        hidden = hidden.float()
        hidden = hidden / hidden.norm(dim=-1, keepdim=True)
        hidden = hidden.cpu()
    return [Embedding(tuple(ids), hidden[row, : len(ids)].clone()) for row, ids in enumerate(batch)]


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
    # Windowed embeddings of long texts differ from truncated ones: cached apart.
    tag = "-w" if long_texts == "windows" else ""
    namespace = f"{loaded.ref.fingerprint()}|{loaded.precision}|L{layer}{tag}"
    disk = disk_store(
        loaded.ref.key, loaded.ref.fingerprint(), f"{loaded.precision}-L{layer}{tag}", disk_mb
    )

    def compute(missing: list[str]) -> list[Embedding]:
        windowed = long_texts == "windows"
        ids = token_ids(loaded, missing, truncate=not windowed)
        limit = window_length(loaded) if windowed else max(len(i) for i in ids)
        return embed_windowed(
            plan_texts(loaded, ids, limit),
            lambda b: _forward_layer(loaded, layer, b),
            batch_size,
            cancel,
        )

    keep = (lambda t: t in persist) if persist is not None else None
    return get_or_compute(namespace, texts, compute, disk, keep)
