"""What a metric's `explain(item)` hook returns: how one score came about, in a form the
compare view can draw without knowing which metric it is.

The view draws each kind of body with one widget: `TokenMatching` as lines between tokens,
`NgramMatches` as the n-grams an output shares with its references, `SariExplanation` as
SARI's added/kept/deleted n-grams, `SceneScores` as SAMSA's scenes; `NoExplanation` says
plainly why there is nothing to show. A plugin returns one of these and is drawn like the
battery's own metrics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # A type only: the base class imports this module for its default `explain`.
    from meaningbench.metrics.base import Pair
    from meaningbench.metrics.study_inputs import StudyInputs


@dataclass(frozen=True)
class ExplainItem:
    """One item as `explain` sees it: the pair (references resolved for the metric's reference
    mode) and, when the study holds one, the stored score being explained."""

    pair: Pair
    value: float | None = None  # the stored 0–100 value; None: nothing stored
    details: Mapping[str, Any] | None = None  # the stored details; None: nothing stored
    # What metrics read of the study besides the texts (SAMSA's scenes); None outside a study.
    study: StudyInputs | None = None
    source_group: str | None = None

    @property
    def stored(self) -> bool:
        return self.details is not None


@dataclass(frozen=True)
class NoExplanation:
    reason: str


@dataclass(frozen=True)
class NgramOrder:
    n: int
    matched: tuple[str, ...]  # in the output and in a reference
    output_only: tuple[str, ...]  # in the output, in no reference
    reference_only: tuple[str, ...]  # in the references, not in the output


@dataclass(frozen=True)
class NgramMatches:
    """The n-grams an output shares with its references, per order (lexical metrics)."""

    orders: tuple[NgramOrder, ...]
    tokenization: str  # how the texts were cut into tokens, in words


@dataclass(frozen=True)
class TokenAlignment:
    """Greedy token matching: each token's best match on the other side and its cosine."""

    ref_tokens: tuple[str, ...]
    cand_tokens: tuple[str, ...]
    ref_best: tuple[int, ...]  # per reference token, the index of its best candidate token
    ref_sim: tuple[float, ...]
    cand_best: tuple[int, ...]  # per candidate token, the index of its best reference token
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
class TokenMatching:
    alignment: TokenAlignment
    against: str  # what the output was matched with: "source", "reference 2", ...


@dataclass(frozen=True)
class SceneScores:
    """SAMSA's computation: per source scene, the output sentence and what was found."""

    details: Mapping[str, Any]


@dataclass(frozen=True)
class Explanation:
    """A body the compare view draws, and one line on what it was computed from."""

    body: object  # one of the kinds above, or SariExplanation
    note: str = ""


def unexplained(label: str, why: str) -> Explanation:
    return Explanation(NoExplanation(f"{label} has no explanation view: {why}"))


def ngram_matches(
    output: str,
    references: Sequence[str],
    tokenize: Callable[[str], Sequence[str]],
    *,
    max_n: int = 4,
    tokenization: str = "",
) -> NgramMatches:
    """Per order 1..max_n, the output's n-grams found in some reference, those found in none,
    and the references' n-grams the output lacks (each n-gram listed once)."""
    out_tokens = list(tokenize(output))
    ref_tokens = [list(tokenize(r)) for r in references]
    orders = []
    for n in range(1, max_n + 1):
        out = _grams(out_tokens, n)
        refs: Counter[str] = Counter()
        for tokens in ref_tokens:
            refs |= _grams(tokens, n)
        orders.append(
            NgramOrder(
                n,
                matched=tuple(g for g in out if g in refs),
                output_only=tuple(g for g in out if g not in refs),
                reference_only=tuple(g for g in refs if g not in out),
            )
        )
    return NgramMatches(tuple(orders), tokenization)


def _grams(tokens: Sequence[str], n: int) -> Counter[str]:
    return Counter(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def references_note(pair: Pair, mode: str) -> str:
    """Which texts a reference-based metric compared the output with, in words."""
    if pair.references == (pair.source,) or not pair.references:
        if mode == "source":
            return "Against the source as the only reference (source mode)."
        return "This item has no references: the source is the reference."
    return f"Against the item's {len(pair.references)} reference(s)."


def stored_note(label: str, stored_value: float | None, live_value: float | None) -> str:
    """Whether an explanation computed here reproduces the stored score it explains."""
    if stored_value is None:
        return f"Computed here: no {label} score is stored for this output."
    if live_value is not None and abs(stored_value - live_value) < 1e-6:
        return f"The stored score is {stored_value:.2f}; this explanation reproduces it."
    return f"The stored score is {stored_value:.2f}; it was computed from other texts."
