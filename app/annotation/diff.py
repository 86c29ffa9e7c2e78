"""Word-level differences between a source and an output, for optional highlighting.

Tokens are words and the whitespace after them, so that joining the segments gives the
text back byte for byte and highlighting never alters what the rater reads. Words are
compared case-insensitively and without surrounding punctuation: "Paris," and "Paris"
count as the same word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

_TOKEN = re.compile(r"\S+\s*|\s+")
_EDGE_PUNCT = re.compile(r"^\W+|\W+$")


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool  # not in the other text (deleted from the source / added in the output)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _key(token: str) -> str:
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


def word_diff(source: str, output: str) -> tuple[list[Segment], list[Segment]]:
    """(source segments, output segments): unchanged runs and changed runs, alternating."""
    a, b = _tokens(source), _tokens(output)
    matcher = SequenceMatcher(a=[_key(t) for t in a], b=[_key(t) for t in b], autojunk=False)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        same = op == "equal"
        if i2 > i1:
            left.append(Segment("".join(a[i1:i2]), not same))
        if j2 > j1:
            right.append(Segment("".join(b[j1:j2]), not same))
    return _merge(left), _merge(right)
