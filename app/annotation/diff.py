"""Word-level differences between a source and an output, for optional highlighting.

Tokens are words and the whitespace after them, so that joining the segments gives the
text back byte for byte and highlighting never alters what the rater reads. Words are
compared case-insensitively and without surrounding punctuation: "Paris," and "Paris"
count as the same word.

A pair of sentences is compared with difflib's SequenceMatcher as it stands. Its cost grows
faster than the length, with how often words repeat (der, die, und): some 70 ms on two
2,000-word German texts, 400–650 ms on two of 6,000 words, more for a small vocabulary, and
all of it on the rating screen's thread at every item. A long pair is therefore first cut
at anchors — words (or, failing those, word pairs and triples) that occur exactly once on
each side, in the same order on both (patience diff) — until every stretch between
anchors is small enough for SequenceMatcher. Texts that repeat themselves so much that
nothing is unique fall back to SequenceMatcher's own bound on popular words (autojunk).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

_TOKEN = re.compile(r"\S+\s*|\s+")
_EDGE_PUNCT = re.compile(r"^\W+|\W+$")

# len(a) * len(b) up to which a stretch goes to SequenceMatcher whole: two 200-word
# paragraphs take a few milliseconds, and every sentence-sized pair stays on that path.
EXACT_BUDGET = 40_000
_ANCHOR_SIZES = (1, 2, 3)

Opcode = tuple[str, int, int, int, int]  # SequenceMatcher.get_opcodes()'s rows
Block = tuple[int, int, int]  # (i, j, n): a[i:i+n] == b[j:j+n]


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool  # not in the other text (deleted from the source / added in the output)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def word_key(token: str) -> str:
    """What two tokens must share to count as the same word."""
    word = token.strip()
    return _EDGE_PUNCT.sub("", word).casefold() or word


def _merge(segments: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for seg in segments:
        if out and out[-1].changed == seg.changed:
            out[-1] = Segment(out[-1].text + seg.text, seg.changed)
        else:
            out.append(seg)
    return out


def _exact_blocks(a: list[str], b: list[str], autojunk: bool = False) -> list[Block]:
    matcher = SequenceMatcher(a=a, b=b, autojunk=autojunk)
    return [(i, j, n) for i, j, n in matcher.get_matching_blocks() if n]


def _unique_positions(seq: list[str], lo: int, hi: int, n: int) -> dict[tuple[str, ...], int]:
    grams = [tuple(seq[k : k + n]) for k in range(lo, hi - n + 1)]
    counts = Counter(grams)
    return {g: lo + k for k, g in enumerate(grams) if counts[g] == 1}


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of (i, j) pairs, sorted by i, whose j increase too (patience sort)."""
    tails: list[int] = []  # tails[k]: smallest j ending an increasing run of length k + 1
    tail_at: list[int] = []  # index into pairs of that run's last pair
    back: list[int] = []
    for idx, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(idx)
        else:
            tails[k] = j
            tail_at[k] = idx
        back.append(tail_at[k - 1] if k else -1)
    run = []
    idx = tail_at[-1] if tail_at else -1
    while idx >= 0:
        run.append(pairs[idx])
        idx = back[idx]
    return run[::-1]


def _anchors(a: list[str], b: list[str], alo: int, ahi: int, blo: int, bhi: int) -> list[Block]:
    for n in _ANCHOR_SIZES:
        in_a = _unique_positions(a, alo, ahi, n)
        in_b = _unique_positions(b, blo, bhi, n)
        pairs = sorted((i, in_b[g]) for g, i in in_a.items() if g in in_b)
        chosen: list[Block] = []
        for i, j in _increasing(pairs):
            # Neighbouring word pairs overlap (a b, b c): keep the first of each overlap.
            if not chosen or (i >= chosen[-1][0] + n and j >= chosen[-1][1] + n):
                chosen.append((i, j, n))
        if chosen:
            return chosen
    return []


def _bounded_blocks(a: list[str], b: list[str]) -> list[Block]:
    blocks: list[Block] = []
    todo = [(0, len(a), 0, len(b))]
    while todo:
        alo, ahi, blo, bhi = todo.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            blocks.append((alo, blo, 1))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            blocks.append((ahi, bhi, 1))
        if alo == ahi or blo == bhi:
            continue
        small = (ahi - alo) * (bhi - blo) <= EXACT_BUDGET
        anchors = [] if small else _anchors(a, b, alo, ahi, blo, bhi)
        if small or not anchors:
            found = _exact_blocks(a[alo:ahi], b[blo:bhi], autojunk=not small)
            blocks.extend((alo + i, blo + j, n) for i, j, n in found)
            continue
        for i, j, n in anchors:
            todo.append((alo, i, blo, j))
            blocks.append((i, j, n))
            alo, blo = i + n, j + n
        todo.append((alo, ahi, blo, bhi))
    return blocks


def _opcodes(blocks: list[Block], len_a: int, len_b: int) -> list[Opcode]:
    """SequenceMatcher.get_opcodes() from matching blocks, adjacent blocks joined as it does."""
    joined: list[list[int]] = []
    for i, j, n in sorted(blocks):
        if joined and joined[-1][0] + joined[-1][2] == i and joined[-1][1] + joined[-1][2] == j:
            joined[-1][2] += n
        else:
            joined.append([i, j, n])
    ops: list[Opcode] = []
    i = j = 0
    for ai, bj, size in [*joined, [len_a, len_b, 0]]:
        tag = "replace" if i < ai and j < bj else "delete" if i < ai else "insert" if j < bj else ""
        if tag:
            ops.append((tag, i, ai, j, bj))
        i, j = ai + size, bj + size
        if size:
            ops.append(("equal", ai, i, bj, j))
    return ops


def word_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """Opcodes as SequenceMatcher gives them, over the tokens' word keys; bounded on long
    texts (see the module's docstring)."""
    ka, kb = [word_key(t) for t in a], [word_key(t) for t in b]
    if len(ka) * len(kb) <= EXACT_BUDGET:
        return list(SequenceMatcher(a=ka, b=kb, autojunk=False).get_opcodes())
    return _opcodes(_bounded_blocks(ka, kb), len(ka), len(kb))


@lru_cache(maxsize=32)
def _cached_diff(source: str, output: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    a, b = tokens(source), tokens(output)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in word_opcodes(a, b):
        same = op == "equal"
        if i2 > i1:
            left.append(Segment("".join(a[i1:i2]), not same))
        if j2 > j1:
            right.append(Segment("".join(b[j1:j2]), not same))
    return tuple(_merge(left)), tuple(_merge(right))


def word_diff(source: str, output: str) -> tuple[list[Segment], list[Segment]]:
    """(source segments, output segments): unchanged runs and changed runs, alternating.

    Kept for the last pairs shown: a repaint or a return to an item costs nothing."""
    left, right = _cached_diff(source, output)
    return list(left), list(right)
