"""Overlapping windows for texts longer than a model's input, and stitching them back.

An encoder sees at most `max_length` tokens, its special tokens included. bert-score and
sentence-transformers cut a longer text there and never look at the rest. Here a long text
is split into windows of the model's full length that overlap by half: the content tokens
(the text without its special tokens) are cut into runs of `capacity = max_length − specials`
tokens starting every `stride = capacity // 2` tokens, the last run ending at the last token,
and each run is framed with the model's special tokens as a sentence of its own.

Stitching gives every token of the text exactly one vector: from the window in which it is
most central (the largest distance to that window's nearer edge, the earlier window on a
tie), so that each token was embedded with at least a quarter of a window of context on
both sides wherever the text allows it. The leading special tokens ([CLS], <s>) take their
vectors from the first window, the trailing ones ([SEP], </s>) from the last.

A text that fits is one window holding exactly its own token ids: it is embedded as before.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Segment:
    """Rows `start:stop` of window `window` give the next tokens of the stitched text."""

    window: int
    start: int
    stop: int


@dataclass(frozen=True)
class WindowPlan:
    """How one text is embedded: the id sequences fed to the model and how to stitch them."""

    ids: tuple[int, ...]  # the whole text's ids, special tokens included
    windows: tuple[tuple[int, ...], ...]  # each fits the model, special tokens included
    segments: tuple[Segment, ...]  # in text order; their lengths add up to len(ids)
    stride: int  # content tokens between the starts of two windows (0: one window)

    @property
    def count(self) -> int:
        return len(self.windows)


def window_stride(capacity: int) -> int:
    """Half a window of content tokens: each token sits at least a quarter window from the
    edge of the window it is taken from (except near the text's own ends)."""
    return max(1, capacity // 2)


def window_starts(n: int, capacity: int, stride: int) -> list[int]:
    """Where each window's content starts, for `n` content tokens; the last window ends at
    the last token, so no window is short."""
    if n <= capacity:
        return [0]
    starts = list(range(0, n - capacity + 1, stride))
    if starts[-1] + capacity < n:
        starts.append(n - capacity)
    return starts


def _owner(p: int, starts: Sequence[int], capacity: int, n: int) -> int:
    """The window in which content token `p` is most central (the earlier one on a tie)."""
    best, best_margin = -1, -1
    # Only windows starting in (p − capacity, p] hold p.
    for w in range(bisect_right(starts, p - capacity), bisect_right(starts, p)):
        s = starts[w]
        e = min(s + capacity, n)
        if p < e:
            margin = min(p - s, e - 1 - p)
            if margin > best_margin:
                best, best_margin = w, margin
    return best


def plan_windows(ids: Sequence[int], max_length: int, prefix: int, suffix: int) -> WindowPlan:
    """Split one text's ids (with `prefix` leading and `suffix` trailing special tokens)
    into windows of at most `max_length` ids, and say how to stitch their embeddings."""
    ids = tuple(ids)
    if len(ids) <= max_length:
        return WindowPlan(ids, (ids,), (Segment(0, 0, len(ids)),), 0)
    capacity = max_length - prefix - suffix
    if capacity < 1:
        raise ValueError(f"a window of {max_length} tokens leaves no room for text")
    head, content, tail = ids[:prefix], ids[prefix : len(ids) - suffix], ids[len(ids) - suffix :]
    n = len(content)
    stride = window_stride(capacity)
    starts = window_starts(n, capacity, stride)
    windows = tuple(head + content[s : s + capacity] + tail for s in starts)
    segments = [Segment(0, 0, prefix)] if prefix else []
    p = 0
    while p < n:  # runs of consecutive tokens with the same owner: one slice each
        w = _owner(p, starts, capacity, n)
        q = p + 1
        while q < n and _owner(q, starts, capacity, n) == w:
            q += 1
        row = prefix + p - starts[w]
        segments.append(Segment(w, row, row + q - p))
        p = q
    if suffix:
        last = len(windows) - 1
        segments.append(Segment(last, len(windows[last]) - suffix, len(windows[last])))
    return WindowPlan(ids, windows, tuple(segments), stride)


def stitch(plan: WindowPlan, window_vectors: Sequence[Any]) -> Any:
    """The text's token vectors [len(ids), d] from its windows' vectors (torch tensors or
    numpy arrays, one [len(window), d] per window, in plan order)."""
    if plan.count == 1:
        return window_vectors[0]
    import numpy as np

    parts = [window_vectors[s.window][s.start : s.stop] for s in plan.segments]
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    import torch

    return torch.cat(parts)


def count_windows(n_ids: int, max_length: int, prefix: int, suffix: int) -> int:
    """How many windows `plan_windows` makes of a text of `n_ids` ids (special tokens included)."""
    if n_ids <= max_length:
        return 1
    capacity = max_length - prefix - suffix
    n = n_ids - prefix - suffix
    return len(window_starts(n, capacity, window_stride(capacity)))
