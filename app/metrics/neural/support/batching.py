"""Running a model over many inputs: length buckets, cancel checks, out-of-memory back-off.

Sorting inputs by token length before cutting batches keeps padding (wasted compute) small;
halving the batch on an out-of-memory error lets a long study finish on a small GPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TypeVar

from meaningbench.errors import UserError
from meaningbench.runtime import CancelToken, report_batch

T = TypeVar("T")
R = TypeVar("R")


# A batch ends before an input that would be padded by more than this share of the batch's
# longest input (and by more than MIN_PADDING tokens). Padding is computed like real tokens:
# with batches of 64 cut from the length-sorted CSMD train texts it was 11 % of the forward
# passes' tokens (the long-tail first batch alone pads 107 tokens down to 52); cut like this,
# 4.6 %, with nearly every batch still full.
MAX_PADDING = 0.1
MIN_PADDING = 2


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (longest first, so an OOM shows early):
    at most `batch_size` each, cut early where the lengths drop (see MAX_PADDING)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    size = max(1, int(batch_size))
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < size:
            longest = lengths[batches[-1][0]]
            pad = longest - lengths[i]
            if pad <= MIN_PADDING or pad <= MAX_PADDING * longest:
                batches[-1].append(i)
                continue
        batches.append([i])
    return batches


def is_out_of_memory(exc: BaseException) -> bool:
    import torch

    oom_types: tuple[type[BaseException], ...] = (torch.cuda.OutOfMemoryError,)
    return isinstance(exc, oom_types) or (
        isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()
    )


def _free_accelerator_memory() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    mps = getattr(torch, "mps", None)
    if mps is not None and hasattr(mps, "empty_cache"):
        with contextlib.suppress(RuntimeError):
            mps.empty_cache()


def run_in_batches(
    items: Sequence[T],
    lengths: Sequence[int],
    fn: Callable[[list[T]], list[R]],
    batch_size: int,
    cancel: CancelToken | None = None,
) -> list[R]:
    """Apply `fn` to length-bucketed batches of `items`; results come back in input order.

    On out-of-memory the batch is split in half and retried, down to single items; the
    smaller size is kept for the rest of the run. `cancel` is checked between batches.
    """
    results: list[R | None] = [None] * len(items)
    size = max(1, int(batch_size))
    pending = length_batches(lengths, size)
    done = 0
    while pending:
        if cancel is not None:
            cancel.check()
        batch = pending.pop(0)
        try:
            out = fn([items[i] for i in batch])
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            _free_accelerator_memory()
            if len(batch) == 1:
                raise UserError(
                    "out of memory on a single input; use a smaller model, the CPU, "
                    "or fp16/bf16 precision"
                ) from exc
            size = max(1, len(batch) // 2)
            pending = [b[i : i + size] for b in [batch, *pending] for i in range(0, len(b), size)]
            continue
        for i, r in zip(batch, out, strict=True):
            results[i] = r
        done += len(batch)
        report_batch(done, len(items))
    return results  # type: ignore[return-value]
