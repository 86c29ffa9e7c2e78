"""What the lexical metrics share: per-item scoring with per-item errors, reference handling,
library versions, and corpus values as a mean when a metric has no corpus formula of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from importlib import metadata
from typing import ClassVar

from meaningbench.metrics.base import ItemScore, Metric, Pair, pair_references
from meaningbench.metrics.explain import (
    ExplainItem,
    Explanation,
    ngram_matches,
    references_note,
    stored_note,
)
from meaningbench.runtime import CancelToken

# How often a long batch looks at its cancel token (items).
CANCEL_EVERY = 256


@cache
def package_version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def clip(value: float, low: float = 0.0, high: float = 100.0) -> float:
    return min(high, max(low, value))


def reference_streams(pairs: Sequence[Pair]) -> list[list[str | None]]:
    """Per-item references as sacrebleu's reference streams (None pads items with fewer)."""
    refs = [pair_references(p) for p in pairs]
    width = max((len(r) for r in refs), default=0)
    return [[r[i] if i < len(r) else None for r in refs] for i in range(width)]


class LexicalMetric(Metric):
    """A CPU-bound metric scored item by item; an item that fails gets an error, not a raise."""

    parallel_safe: ClassVar[bool] = True
    # Distributions whose versions are recorded with each run.
    packages: ClassVar[tuple[str, ...]] = ()
    # For metrics that count shared n-grams (`explains_live`): the highest order `explain`
    # lists, and how `explain_tokens` cuts a text, in words.
    explain_orders: ClassVar[int] = 4
    tokenization: ClassVar[str] = ""

    def versions(self) -> dict[str, str]:
        return {dist: package_version(dist) for dist in self.packages}

    def device(self) -> str | None:
        return "cpu"

    def score_one(self, pair: Pair) -> ItemScore:
        raise NotImplementedError

    def warm_up(self) -> None:
        # Scoring one sentence loads everything the metric uses (CMUdict, WordNet, stemmer).
        text = "A short sentence loads what scoring needs."
        self.score_batch([Pair(0, text, text, (text,))])

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        out: list[ItemScore] = []
        for i, pair in enumerate(pairs):
            if cancel is not None and i % CANCEL_EVERY == 0:
                cancel.check()
            try:
                out.append(self.score_one(pair))
            except Exception as exc:  # one bad item must not sink the batch
                out.append(ItemScore(None, None, {}, error=f"{type(exc).__name__}: {exc}"))
        return out

    def explain_tokens(self, text: str) -> Sequence[str]:
        """The tokens the metric's n-grams are made of (metrics with `explains_live`)."""
        raise NotImplementedError

    def explain(self, item: ExplainItem) -> Explanation:
        """The n-grams the output shares with its references, as this metric tokenizes."""
        if not self.explains_live:
            return super().explain(item)
        pair = item.pair
        matches = ngram_matches(
            pair.output,
            pair_references(pair),
            self.explain_tokens,
            max_n=self.explain_orders,
            tokenization=self.tokenization,
        )
        live = self.score_one(pair).value if item.stored else None
        note = f"{references_note(pair, self.reference_mode)} "
        note += stored_note(self.info.label, item.value, live)
        return Explanation(matches, note)

    def corpus_score(self, pairs: Sequence[Pair]) -> float | None:
        """The mean item value, for metrics without a corpus formula of their own."""
        values = [s.value for s in self.score_batch(pairs) if s.value is not None]
        values = [v for v in values if not math.isnan(v)]
        return sum(values) / len(values) if values else None
