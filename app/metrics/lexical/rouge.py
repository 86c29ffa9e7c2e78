"""ROUGE-1, ROUGE-2 and ROUGE-L F-measure, as Google's `rouge-score` computes them with the
Porter stemmer. With several references the best F-measure counts (`score_multi`).

The three are separate metrics (one column each) sharing one memoized tokenizer: stemming
is what ROUGE costs, and a text is stemmed once per process for all three.

rouge-score is English: its tokenizer keeps only the letters a–z and digits (German
"für" becomes "f r", Chinese text nothing at all) and its stemmer is Porter's. In a study
of another language the words are cut on Unicode letters instead (each Chinese or
Japanese character a word of its own) and stemming is off; each score's details say so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property, lru_cache
from typing import Any, ClassVar

from meaningbench.metrics.base import (
    Availability,
    ItemScore,
    MetricInfo,
    Pair,
    pair_references,
    too_long,
)
from meaningbench.metrics.languages import LanguageMetric, is_english, language_label
from meaningbench.metrics.lexical.common import LexicalMetric

# Han characters and Japanese kana: scripts written without spaces, one word per character.
_UNSPACED = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")
_LETTERS = re.compile(r"[^\W_]+")


def unicode_tokens(text: str) -> list[str]:
    """Lowercased runs of letters and digits of any script; Han and kana one by one."""
    return _LETTERS.findall(_UNSPACED.sub(r" \1 ", text.lower()))


class _UnicodeTokenizer:
    """The tokenizer of studies not in English (no stemmer), memoized like the English one."""

    def __init__(self) -> None:
        self.tokenize = lru_cache(maxsize=2**16)(lambda text: tuple(unicode_tokens(text)))


class _CachedTokenizer:
    """rouge-score's default tokenization (`rouge_score.tokenize.tokenize`, as its
    DefaultTokenizer runs it) with NLTK's Porter stemmer memoized per word and whole texts
    memoized too: stemming is what ROUGE costs, and a study's vocabulary repeats.
    """

    def __init__(self, use_stemmer: bool) -> None:
        from nltk.stem import porter
        from rouge_score import tokenize

        stemmer = None
        if use_stemmer:
            stemmer = porter.PorterStemmer()
            stemmer.stem = lru_cache(maxsize=2**17)(stemmer.stem)
        self.tokenize = lru_cache(maxsize=2**16)(
            lambda text: tuple(tokenize.tokenize(text, stemmer))
        )


@lru_cache(maxsize=4)
def _tokenizer(use_stemmer: bool, english: bool = True) -> _CachedTokenizer | _UnicodeTokenizer:
    return _CachedTokenizer(use_stemmer) if english else _UnicodeTokenizer()


class _RougeMetric(LanguageMetric, LexicalMetric):
    rouge_type: ClassVar[str]
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "use_stemmer": True,
        "language": "en",
    }
    option_types: ClassVar[dict[str, Any]] = {"language": str}
    packages = ("rouge-score", "nltk")
    explains_live = True
    tokenization = "rouge-score's tokenizer (lowercased words, Porter-stemmed with use_stemmer)"

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        if not is_english(self.language):
            if config.get("use_stemmer"):
                raise ValueError(
                    f"{self.name}: use_stemmer: rouge-score's stemmer is English (Porter); "
                    f"there is none for {language_label(self.language)}"
                )
            self.config["use_stemmer"] = False
            self._stemming_note = (
                "off: rouge-score's stemmer is English (Porter), none for "
                f"{language_label(self.language)}; words cut on Unicode letters"
            )

    def availability(self) -> Availability:
        if is_english(self.language):
            return Availability(True)
        return Availability(True, f"stemming {self._stemming_note}")

    def _tokenizer(self) -> _CachedTokenizer | _UnicodeTokenizer:
        return _tokenizer(bool(self.config["use_stemmer"]), is_english(self.language))

    def explain_tokens(self, text: str) -> Sequence[str]:
        return self._tokenizer().tokenize(text)

    @cached_property
    def _scorer(self) -> Any:
        from rouge_score.rouge_scorer import RougeScorer

        return RougeScorer([self.rouge_type], tokenizer=self._tokenizer())

    def score_one(self, pair: Pair) -> ItemScore:
        refs = pair_references(pair)
        if len(refs) == 1:
            score = self._scorer.score(refs[0], pair.output)[self.rouge_type]
        else:
            score = self._scorer.score_multi(list(refs), pair.output)[self.rouge_type]
        details: dict[str, Any] = {
            "precision": float(score.precision),
            "recall": float(score.recall),
        }
        if not is_english(self.language):
            details["stemming"] = self._stemming_note
        return ItemScore(100 * float(score.fmeasure), float(score.fmeasure), details)


def _info(name: str, label: str, what: str) -> MetricInfo:
    return MetricInfo(
        name=name,
        label=label,
        family="lexical",
        description=f"rouge-score {what} F-measure with the Porter stemmer; raw on 0–1.",
        needs_references=True,
        reference="rouge-score's RougeScorer (Porter stemmer)",
        parity_test="tests/metrics/lexical/test_oracles.py::test_rouge_is_rouge_score_with_stemmer",
    )


class Rouge1Metric(_RougeMetric):
    info = _info("rouge1", "ROUGE-1", "unigram")
    rouge_type = "rouge1"
    explain_orders = 1


class Rouge2Metric(_RougeMetric):
    info = _info("rouge2", "ROUGE-2", "bigram")
    rouge_type = "rouge2"
    explain_orders = 2


class RougeLMetric(_RougeMetric):
    info = _info("rougel", "ROUGE-L", "longest common subsequence")
    rouge_type = "rougeL"
    # The longest common subsequence is made of shared words: unigrams show them.
    explain_orders = 1
    # rouge-score's LCS table is words × words in Python: 4,000 words take 2.5 s, 20,000
    # about a minute (resources/docs/input-rules.md); longer items are not computed.
    defaults: ClassVar[dict[str, Any]] = {**_RougeMetric.defaults, "max_words": 5000}
    hashed_when_set = frozenset({"max_words", "language"})

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        limit = self.config["max_words"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"rougel: max_words must be a whole number above 0, not {limit!r}")

    def score_one(self, pair: Pair) -> ItemScore:
        tokenize = self._tokenizer().tokenize
        words = max(len(tokenize(t)) for t in (pair.output, *pair_references(pair)))
        guard = too_long("ROUGE-L", words, int(self.config["max_words"]))
        return guard if guard is not None else super().score_one(pair)
