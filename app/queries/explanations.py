"""What a metric's explanation of one score holds, and a token alignment as the matching
view draws it.

The explanations are the metrics' own dataclasses (`meaningbench.metrics.explain`, SARI's
n-gram operations), answered by `meaningbench.queries.compare.explain_score`.

The alignment (`meaningbench.metrics.explain.TokenAlignment`) carries, for the candidate and
the reference, the tokens, each token's best match on the other side and that match's cosine
similarity. The view draws those lines and nothing else: a recall line from each reference
token to its best candidate token, a precision line from each candidate token to its best
reference token; when both point at each other they are one "mutual" line.
"""

from __future__ import annotations

from dataclasses import dataclass

from meaningbench.metrics.explain import (
    Explanation,
    NgramMatches,
    NoExplanation,
    SceneScores,
    TokenAlignment,
    TokenMatching,
)
from meaningbench.metrics.lexical.sari import NgramOperations, SariExplanation

__all__ = [
    "Explanation",
    "Line",
    "NgramMatches",
    "NgramOperations",
    "NoExplanation",
    "SariExplanation",
    "SceneScores",
    "TokenAlignment",
    "TokenMatching",
    "alignment_lines",
    "display_token",
    "is_special",
]

SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]", "<s>", "</s>", "[PAD]", "<pad>", "<cls>", "<sep>"})


@dataclass(frozen=True)
class Line:
    kind: str  # "recall" (reference → candidate) | "precision" (candidate → reference) | "mutual"
    ref: int
    cand: int
    sim: float


def alignment_lines(a: TokenAlignment) -> list[Line]:
    recall = {(i, j): s for i, (j, s) in enumerate(zip(a.ref_best, a.ref_sim, strict=True))}
    precision = {(i, j): s for j, (i, s) in enumerate(zip(a.cand_best, a.cand_sim, strict=True))}
    lines = []
    for (i, j), s in recall.items():
        lines.append(Line("mutual" if (i, j) in precision else "recall", i, j, s))
    for (i, j), s in precision.items():
        if (i, j) not in recall:
            lines.append(Line("precision", i, j, s))
    return lines


def display_token(token: str) -> str:
    """Subword markers made readable: RoBERTa's Ġ and SentencePiece's ▁ start a word."""
    return token.replace("Ġ", "").replace("▁", "") or token


def is_special(token: str) -> bool:
    return token in SPECIAL_TOKENS
