"""The judge's score read straight after a fixed answer prefix, without a free answer.

The prompt is the template's, and the model's answer is pre-filled with the template's
`prefix` (`Score: ` for the built-in score templates): a chat model's assistant turn begins
with it, a plain model's prompt ends with `Answer: `. The next-token distribution there is the
score's: the expected score is the one `judge_expected` defines (the digit rule, or whole
score tokens), read at that fixed place instead of where a greedy answer's number began.

Cost: one forward pass per batch of items. The tokens every prompt of the batch begins with
(the chat header and the template's text before the source) are forwarded once and their
key-value cache is kept for the next batches. The rest of each prompt, and then the digit
tree's nodes ("1".."9", "10" on 0–100: the last digit of each), go into one packed row, with
a 4D attention mask under which each token sees exactly what it would see in a plain forward
pass of its own prompt (the shared head, its own prompt's tokens before it, and for a node
its own ancestors), at the position it would have there. So every P(next token) the digit
rule needs is the same quantity as in a forward pass of prompt + digits per candidate (equal
up to float rounding), while the prompt is forwarded once, without padding, and the head
once for the whole run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from meaningbench.metrics.neural.support.judge_expected import (
    Expected,
    from_digit_tree,
    from_whole_tokens,
    growing_prefixes,
    score_strings,
)

DIGITS = "0123456789"


@dataclass(frozen=True)
class Reading:
    """How a tokenizer writes the valid scores after the prefix: `digits` (one token per
    digit: the digit rule), `whole` (each score one token) or None (neither: the score is
    then read from a free answer that continues the prefix)."""

    kind: str | None
    tokens: dict[str, int]  # a digit's token (digits) or a score's token (whole)


def reading(tokenizer: Any, text: str, special: bool, low: int, high: int) -> Reading:
    """How the scores continue `text` (the prompt with its prefix; `special`: encoded with
    the tokenizer's special tokens), checked on the item's whole text: each score's tokens
    must follow the prompt's own, which stay unchanged."""
    base = list(tokenizer.encode(text, add_special_tokens=special))
    valid = score_strings(low, high)
    encoded = tokenizer([text + s for s in valid], add_special_tokens=special)["input_ids"]
    tails: dict[str, list[int]] = {}
    for s, ids in zip(valid, encoded, strict=True):
        if list(ids[: len(base)]) != base:
            return Reading(None, {})
        tails[s] = list(ids[len(base) :])
    unknown = getattr(tokenizer, "unk_token_id", None)
    if any(unknown is not None and unknown in tail for tail in tails.values()):
        return Reading(None, {})  # a score the vocabulary cannot write
    digit: dict[str, int] = {}
    # One token per digit, always the same one for the same digit: the digit rule.
    if all(
        len(tail) == len(s)
        and all(digit.setdefault(c, t) == t for c, t in zip(s, tail, strict=True))
        for s, tail in tails.items()
    ) and len(set(digit.values())) == len(digit):
        return Reading("digits", digit)
    whole = {s: tail[0] for s, tail in tails.items() if len(tail) == 1}
    if len(whole) == len(tails) and len(set(whole.values())) == len(whole):
        return Reading("whole", whole)
    return Reading(None, {})


@dataclass(frozen=True)
class Model:
    """What the pass needs of a loaded judge."""

    model: Any
    device: str
    cache_arg: str  # the forward pass's name for the key-value cache
    # Whether the forward pass takes `logits_to_keep` (transformers ≥ 4.50): else the
    # vocabulary's logits are computed everywhere and the wanted ones picked out.
    keeps_logits: bool = True

    def keep(self, where: Any) -> dict[str, Any]:
        return {"logits_to_keep": where} if self.keeps_logits else {}


@dataclass
class HeadCache:
    """The key-value cache of the tokens the prompts begin with, kept across batches."""

    ids: tuple[int, ...] = ()
    cache: Any = None


def common_length(rows: Sequence[Sequence[int]]) -> int:
    """How many first tokens all rows share, leaving each at least one of its own."""
    limit = min(len(r) for r in rows) - 1
    n = 0
    while n < limit and all(r[n] == rows[0][n] for r in rows):
        n += 1
    return n


def _head(m: Model, rows: Sequence[Sequence[int]], memo: HeadCache) -> tuple[int, Any]:
    """(length, a copy of the cache) of a head every row begins with: the kept one when it
    fits, else this batch's common tokens, forwarded once and kept."""
    import copy

    import torch

    n = len(memo.ids)
    if memo.cache is None or not all(tuple(r[:n]) == memo.ids and len(r) > n for r in rows):
        n = common_length(rows)
        memo.ids, memo.cache = tuple(rows[0][:n]), None
        if n:
            ids = torch.tensor([list(memo.ids)], device=m.device)
            out = m.model(input_ids=ids, use_cache=True, **m.keep(1))
            memo.cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
    # The pass appends to the cache it is given: the kept one stays the head's alone.
    return n, copy.deepcopy(memo.cache) if n else None


@dataclass(frozen=True)
class Packed:
    ids: list[int]
    positions: list[int]
    sees: Any  # [queries, head + queries] bool
    read: list[int]  # per item: its prompt's last token, then its nodes


def pack(
    rows: Sequence[Sequence[int]], head: int, nodes: Sequence[str], digit: dict[str, int]
) -> Packed:
    """One row: each prompt past the head, then its tree nodes; who sees whom."""
    import torch

    size = sum(len(r) - head + len(nodes) for r in rows)
    sees = torch.zeros(size, head + size, dtype=torch.bool)
    sees[:, :head] = True
    tree = torch.tensor([[a.startswith(b) for b in nodes] for a in nodes], dtype=torch.bool)
    ids: list[int] = []
    positions: list[int] = []
    read: list[int] = []
    for row in rows:
        start, n = len(ids), len(row) - head
        ids += list(row[head:])
        positions += range(head, len(row))
        sees[start : start + n, head + start : head + start + n] = torch.ones(n, n).tril().bool()
        read.append(start + n - 1)
        if nodes:
            top = start + n
            ids += [digit[node[-1]] for node in nodes]
            positions += [len(row) + len(node) - 1 for node in nodes]
            sees[top : top + len(nodes), head + start : head + top] = True
            sees[top : top + len(nodes), head + top : head + top + len(nodes)] = tree
            read += range(top, top + len(nodes))
    return Packed(ids, positions, sees, read)


def _packed_pass(
    m: Model,
    rows: Sequence[Sequence[int]],
    nodes: Sequence[str],
    digit: dict[str, int],
    memo: HeadCache,
) -> Any:
    """P(next token) after each prompt and after prompt + node for each node:
    [items, 1 + nodes, vocab]."""
    import torch

    head, cache = _head(m, rows, memo)
    packed = pack(rows, head, nodes, digit)
    dtype = next(m.model.parameters()).dtype
    blocked = torch.full(packed.sees.shape, torch.finfo(dtype).min, dtype=dtype)
    mask = blocked.masked_fill(packed.sees, 0.0)[None, None].to(m.device)
    extra = {m.cache_arg: cache} if cache is not None else {}
    out = m.model(
        input_ids=torch.tensor([packed.ids], device=m.device),
        attention_mask=mask,
        position_ids=torch.tensor([packed.positions], device=m.device),
        use_cache=cache is not None,
        **m.keep(torch.tensor(packed.read, device=m.device)),
        **extra,
    )
    logits = out.logits[0] if m.keeps_logits else out.logits[0, packed.read]
    logits = logits.float()
    return torch.softmax(logits, dim=-1).view(len(rows), 1 + len(nodes), -1)


def expected_after_prefix(
    m: Model, rows: Sequence[Sequence[int]], how: Reading, low: int, high: int, memo: HeadCache
) -> list[Expected | None]:
    """The expected score of each prompt (ids with the prefix) under `how`, in one forward
    pass for the whole batch."""
    import torch

    nodes = [p for p in growing_prefixes(low, high) if p] if how.kind == "digits" else []
    with torch.inference_mode():
        probs = _packed_pass(m, rows, nodes, how.tokens, memo)
    if how.kind == "whole":
        return [
            from_whole_tokens({s: float(probs[i, 0, t]) for s, t in how.tokens.items()}, low, high)
            for i in range(len(rows))
        ]
    names = [d for d in DIGITS if d in how.tokens]
    columns = [how.tokens[d] for d in names]
    out: list[Expected | None] = []
    for i in range(len(rows)):
        table = probs[i][:, columns].tolist()
        next_digit = {
            place: dict(zip(names, table[j], strict=True)) for j, place in enumerate(["", *nodes])
        }
        out.append(from_digit_tree(next_digit, low, high))
    return out
