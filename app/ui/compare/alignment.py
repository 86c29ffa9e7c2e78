"""The BERTScore token alignment as the matching view draws it (Qt-free).

BERTScore's details carry, for the candidate and the reference, the tokens, each token's
best match on the other side and that match's cosine similarity (`meaningbench.metrics.neural.greedy
.alignment_details`). The view draws those lines and nothing else: a recall line from each
reference token to its best candidate token, a precision line from each candidate token to
its best reference token; when both point at each other they are one "mutual" line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]", "<s>", "</s>", "[PAD]", "<pad>", "<cls>", "<sep>"})


@dataclass(frozen=True)
class TokenAlignment:
    ref_tokens: tuple[str, ...]
    cand_tokens: tuple[str, ...]
    ref_best: tuple[int, ...]  # for each reference token, its best candidate token
    ref_sim: tuple[float, ...]
    cand_best: tuple[int, ...]  # for each candidate token, its best reference token
    cand_sim: tuple[float, ...]
    P: float
    R: float
    F: float

    def __post_init__(self) -> None:
        if not (len(self.ref_tokens) == len(self.ref_best) == len(self.ref_sim)):
            raise ValueError("reference tokens, matches and similarities differ in length")
        if not (len(self.cand_tokens) == len(self.cand_best) == len(self.cand_sim)):
            raise ValueError("candidate tokens, matches and similarities differ in length")
        if any(not 0 <= j < len(self.cand_tokens) for j in self.ref_best):
            raise ValueError("a reference token points outside the candidate")
        if any(not 0 <= i < len(self.ref_tokens) for i in self.cand_best):
            raise ValueError("a candidate token points outside the reference")

    def unpicked_ref(self) -> set[int]:
        """Reference tokens no candidate token chose as its best match."""
        return set(range(len(self.ref_tokens))) - set(self.cand_best)

    def unpicked_cand(self) -> set[int]:
        """Candidate tokens no reference token chose as its best match."""
        return set(range(len(self.cand_tokens))) - set(self.ref_best)


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


def from_bertscore_details(details: Mapping[str, Any]) -> TokenAlignment:
    """Read the alignment stored with a BERTScore score; ValueError when it has none."""
    align = details.get("alignment")
    if not isinstance(align, Mapping) or "cand" not in align or "ref" not in align:
        raise ValueError("this BERTScore score was stored without its token alignment")
    cand, ref = align["cand"], align["ref"]
    return TokenAlignment(
        ref_tokens=tuple(str(t) for t in ref["tokens"]),
        cand_tokens=tuple(str(t) for t in cand["tokens"]),
        ref_best=tuple(int(i) for i in ref["best"]),
        ref_sim=tuple(float(s) for s in ref["sim"]),
        cand_best=tuple(int(i) for i in cand["best"]),
        cand_sim=tuple(float(s) for s in cand["sim"]),
        P=float(details.get("P") or 0.0),
        R=float(details.get("R") or 0.0),
        F=float(details.get("F1", details.get("F")) or 0.0),
    )


def display_token(token: str) -> str:
    """Subword markers made readable: RoBERTa's Ġ and SentencePiece's ▁ start a word."""
    return token.replace("Ġ", "").replace("▁", "") or token


def is_special(token: str) -> bool:
    return token in SPECIAL_TOKENS
