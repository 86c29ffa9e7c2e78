"""Tokenized examples, length-bucketed batches and batched prediction.

Pairs are tokenized once, as the `meaningbert` metric does (truncation longest-first), and
padded per batch. Batches group examples of similar length inside large random chunks: on a
CPU the cost of a step grows with the padded length, and sentence pairs vary from 20 to 200
tokens. The batch order depends only on (seed, epoch), so a resumed run replays the same
epoch and can skip the batches it already did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from meaningbench.training.augment import Example

BUCKET_BATCHES = 50  # batches per length-sorted chunk


@dataclass
class Encoded:
    """Token ids per example (lists of ints) and targets on the 0–100 scale."""

    features: dict[str, list[list[int]]]  # input_ids, token_type_ids when the model uses them
    targets: np.ndarray
    pad_id: int

    def __len__(self) -> int:
        return len(self.targets)

    @property
    def lengths(self) -> np.ndarray:
        return np.array([len(ids) for ids in self.features["input_ids"]], dtype=np.int64)


def encode(tokenizer: Any, examples: Sequence[Example], max_length: int) -> Encoded:
    if not examples:
        return Encoded(features={"input_ids": []}, targets=np.zeros(0), pad_id=0)
    enc = tokenizer(
        [e.text_a for e in examples],
        [e.text_b for e in examples],
        truncation="longest_first",
        max_length=max_length,
    )
    features = {"input_ids": list(enc["input_ids"])}
    if "token_type_ids" in enc:
        features["token_type_ids"] = list(enc["token_type_ids"])
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    targets = np.array([e.target for e in examples], dtype=np.float64)
    return Encoded(features=features, targets=targets, pad_id=int(pad_id))


def collate(data: Encoded, indices: Sequence[int] | np.ndarray, device: str) -> dict[str, Any]:
    """Padded tensors for the examples at `indices` (attention mask 0 on padding)."""
    import torch

    ids = [data.features["input_ids"][i] for i in indices]
    width = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), width), data.pad_id, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for row, x in enumerate(ids):
        input_ids[row, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[row, : len(x)] = 1
    batch = {"input_ids": input_ids, "attention_mask": mask}
    if "token_type_ids" in data.features:
        types = torch.zeros((len(ids), width), dtype=torch.long)
        for row, i in enumerate(indices):
            t = data.features["token_type_ids"][i]
            types[row, : len(t)] = torch.tensor(t, dtype=torch.long)
        batch["token_type_ids"] = types
    return {k: v.to(device) for k, v in batch.items()}


def steps_per_epoch(n_examples: int, batch_size: int) -> int:
    return -(-n_examples // batch_size)


def epoch_batches(
    lengths: np.ndarray, batch_size: int, *, seed: int, epoch: int
) -> list[np.ndarray]:
    """The batches (index arrays) of one epoch: shuffled, length-bucketed, deterministic."""
    n = len(lengths)
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(n)
    chunk = batch_size * BUCKET_BATCHES
    batches: list[np.ndarray] = []
    for start in range(0, n, chunk):
        idx = order[start : start + chunk]
        idx = idx[np.argsort(lengths[idx], kind="stable")]
        batches.extend(idx[i : i + batch_size] for i in range(0, len(idx), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def sorted_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Batches by length for inference (order does not matter there)."""
    order = np.argsort(lengths, kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def predict(
    model: Any,
    data: Encoded,
    *,
    device: str,
    batch_size: int = 32,
    scale: float = 1.0,
    check: Any = None,
) -> np.ndarray:
    """The model's logits times `scale`, in the order of `data` (eval mode, no gradients)."""

    def logits(idx: np.ndarray) -> np.ndarray:
        out = model(**collate(data, idx, device)).logits.reshape(-1)
        return np.asarray(out.float().cpu().numpy() * scale)

    return predict_batches(model, data.lengths, batch_size, logits, check)


def predict_batches(
    model: Any,
    lengths: np.ndarray,
    batch_size: int,
    score: Callable[[np.ndarray], np.ndarray],
    check: Callable[[], None] | None = None,
) -> np.ndarray:
    """`score` of each length-sorted batch of indices, in index order, with the model in eval
    mode and no gradients (its training mode restored after); `check` runs before each batch."""
    import torch

    out = np.zeros(len(lengths), dtype=np.float64)
    if len(lengths) == 0:
        return out
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for idx in sorted_batches(lengths, batch_size):
                if check is not None:
                    check()
                out[idx] = score(idx)
    finally:
        model.train(was_training)
    return out
