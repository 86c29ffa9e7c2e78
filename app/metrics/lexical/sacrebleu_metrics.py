"""BLEU, chrF and TER, as sacrebleu computes them (sentence level per item, corpus level per
system). TER's edit distance runs on `ter_core`, sacrebleu's algorithm made faster.
"""

from __future__ import annotations

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
from meaningbench.metrics.languages import LanguageMetric
from meaningbench.metrics.lexical.common import LexicalMetric, clip, reference_streams
from meaningbench.metrics.lexical.ter_core import translation_edit_rate
from meaningbench.metrics.lexical.text import (
    SacrebleuTokenizer,
    language_tokenizer,
    normalize,
    tokenizer_missing,
    wordpunct_tokens,
)


class SentenceScorer:
    """sacrebleu's `sentence_score`, with each distinct reference set's statistics extracted
    once: a source serves as the reference of every system's output of it.

    It runs the steps `sentence_score` runs (preprocess, reference info, segment statistics,
    score from statistics) through the metric object's own methods; tests hold the results
    to `sentence_bleu` / `sentence_chrf` on the same inputs.
    """

    def __init__(self, metric: Any, *, remember: int = 0) -> None:
        self.metric = metric
        self._reference_info = lru_cache(maxsize=2**14)(self._extract)
        if remember:
            self.score = lru_cache(maxsize=remember)(self.score)  # type: ignore[method-assign]

    def _extract(self, refs: tuple[str, ...]) -> Any:
        m = self.metric
        return m._extract_reference_info([m._preprocess_segment(r) for r in refs])

    def __call__(self, hypothesis: str, references: Sequence[str]) -> Any:
        return self.score(hypothesis, tuple(references))

    def score(self, hypothesis: str, references: tuple[str, ...]) -> Any:
        m = self.metric
        info = self._reference_info(references)
        stats = m._compute_segment_statistics(m._preprocess_segment(hypothesis), info)
        return m._compute_score_from_stats(stats)


def sacrebleu_corpus_score(metric: Any, pairs: Sequence[Pair]) -> float:
    """A sacrebleu metric object's corpus score of the outputs against their references."""
    # sacrebleu reads a None in a reference stream as "no reference for this segment".
    streams: Any = reference_streams(pairs)
    return float(metric.corpus_score([p.output for p in pairs], streams).score)


@lru_cache(maxsize=8)
def bleu_scorer(lowercase: bool, tokenize: str) -> SentenceScorer:
    """One sentence-BLEU scorer per setting, remembering recent results: BLEU, iBLEU and
    FKBLEU all need BLEU(output, source) in the default reference mode."""
    from sacrebleu.metrics import BLEU

    # sentence_bleu's settings: exp smoothing and the effective n-gram order.
    metric = BLEU(lowercase=lowercase, tokenize=tokenize, effective_order=True)
    return SentenceScorer(metric, remember=2**15)


def tokenizer_availability(name: str) -> Availability:
    missing = tokenizer_missing(name)
    return Availability(True) if missing is None else Availability(False, missing)


class BleuMetric(LanguageMetric, LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="bleu",
        label="BLEU",
        family="lexical",
        description="sacrebleu sentence BLEU (exp smoothing, effective order); corpus BLEU "
        "per system.",
        needs_references=True,
        reference="sacrebleu sentence_bleu and corpus_bleu",
        parity_test="tests/metrics/lexical/test_oracles.py::test_bleu_is_sacrebleu_sentence_bleu",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "lowercase": False,
        "tokenize": "13a",
        "language": "en",
    }
    option_types: ClassVar[dict[str, Any]] = {
        "tokenize": SacrebleuTokenizer,
        "language": str,
    }
    packages = ("sacrebleu",)
    explains_live = True
    tokenization = "sacrebleu's tokenizer (the tokenize option), as BLEU counts n-grams 1–4"

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        language_tokenizer(self.config, config)

    def availability(self) -> Availability:
        return tokenizer_availability(str(self.config["tokenize"]))

    def explain_tokens(self, text: str) -> Sequence[str]:
        return normalize(text, bool(self.config["lowercase"]), str(self.config["tokenize"])).split()

    @cached_property
    def _bleu(self) -> SentenceScorer:
        return bleu_scorer(bool(self.config["lowercase"]), str(self.config["tokenize"]))

    def bleu(self, output: str, references: Sequence[str]) -> Any:
        return self._bleu(output, references)

    def score_one(self, pair: Pair) -> ItemScore:
        result = self.bleu(pair.output, pair_references(pair))
        details = {
            "precisions": [float(p) for p in result.precisions],
            "bp": float(result.bp),
            "sys_len": int(result.sys_len),
            "ref_len": int(result.ref_len),
        }
        return ItemScore(float(result.score), float(result.score), details)

    def corpus_score(self, pairs: Sequence[Pair]) -> float | None:
        from sacrebleu.metrics import BLEU

        if not pairs:
            return None
        corpus = BLEU(lowercase=self.config["lowercase"], tokenize=self.config["tokenize"])
        corpus._force = True  # our data may be tokenized; the warning is noise here
        return sacrebleu_corpus_score(corpus, pairs)


class ChrfMetric(LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="chrf",
        label="chrF",
        family="lexical",
        description="sacrebleu chrF (character 6-grams, beta 2); word_order=2 gives chrF++.",
        needs_references=True,
        reference="sacrebleu CHRF",
        parity_test="tests/metrics/lexical/test_oracles.py::test_chrf_is_sacrebleu_sentence_chrf",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "word_order": 0,
        "lowercase": False,
    }
    packages = ("sacrebleu",)
    explains_live = True
    tokenization = (
        "words; chrF itself counts character n-grams up to 6 (and word n-grams with word_order)"
    )

    def explain_tokens(self, text: str) -> Sequence[str]:
        return wordpunct_tokens(text.lower() if self.config["lowercase"] else text)

    def _new_chrf(self) -> Any:
        from sacrebleu.metrics import CHRF

        return CHRF(word_order=int(self.config["word_order"]), lowercase=self.config["lowercase"])

    @cached_property
    def _chrf(self) -> SentenceScorer:
        return SentenceScorer(self._new_chrf())

    def score_one(self, pair: Pair) -> ItemScore:
        result = self._chrf(pair.output, pair_references(pair))
        return ItemScore(float(result.score), float(result.score), {})

    def corpus_score(self, pairs: Sequence[Pair]) -> float | None:
        if not pairs:
            return None
        return sacrebleu_corpus_score(self._new_chrf(), pairs)


class TerMetric(LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="ter",
        label="TER",
        family="lexical",
        description="Translation edit rate (sacrebleu); shown as max(0, 100 − TER), raw = TER.",
        needs_references=True,
        reference="sacrebleu TER",
        parity_test="tests/metrics/lexical/test_oracles.py::test_ter_is_100_minus_sacrebleu_ter",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "normalized": False,
        "no_punct": False,
        "case_sensitive": False,
        # TER's shift search grows much faster than the text: 1,000 words take seconds,
        # 3,200 half a minute (resources/docs/input-rules.md); longer items are not computed.
        "max_words": 1000,
    }
    hashed_when_set = frozenset({"max_words"})
    packages = ("sacrebleu",)
    explains_live = True
    tokenization = (
        "TER's tokenizer; TER itself counts the edits (shifts, insertions, deletions, "
        "substitutions) that turn the output into a reference"
    )

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        limit = self.config["max_words"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"ter: max_words must be a whole number above 0, not {limit!r}")

    @cached_property
    def _tokenizer(self) -> Any:
        from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

        return TercomTokenizer(
            normalized=self.config["normalized"],
            no_punct=self.config["no_punct"],
            case_sensitive=self.config["case_sensitive"],
        )

    def _words(self, text: str) -> list[str]:
        return str(self._tokenizer(text.rstrip())).split()

    def explain_tokens(self, text: str) -> Sequence[str]:
        return self._words(text)

    def _too_long(self, hyp: list[str], refs: list[list[str]]) -> ItemScore | None:
        words = max(len(hyp), *(len(r) for r in refs))
        return too_long("TER", words, int(self.config["max_words"]))

    @staticmethod
    def _statistics(hyp: list[str], refs: list[list[str]]) -> tuple[int, float]:
        """(fewest edits over the references, mean reference length), as sacrebleu's TER."""
        best = None
        total_len = 0
        for ref in refs:
            edits, ref_len = translation_edit_rate(hyp, ref)
            total_len += ref_len
            best = edits if best is None or edits < best else best
        return int(best or 0), total_len / len(refs)

    @staticmethod
    def _ter(edits: float, ref_len: float) -> float:
        if ref_len > 0:
            return 100 * edits / ref_len
        return 100.0 if edits > 0 else 0.0

    def score_one(self, pair: Pair) -> ItemScore:
        hyp = self._words(pair.output)
        refs = [self._words(r) for r in pair_references(pair)]
        guard = self._too_long(hyp, refs)
        if guard is not None:
            return guard
        edits, ref_len = self._statistics(hyp, refs)
        ter = self._ter(edits, ref_len)
        return ItemScore(clip(100 - ter), ter, {"edits": edits, "ref_len": ref_len})

    def corpus_score(self, pairs: Sequence[Pair]) -> float | None:
        """Corpus TER (total edits / total mean reference length), shown as 100 − TER;
        items too long for TER are left out, as they have no item score either."""
        edits = 0.0
        ref_len = 0.0
        counted = 0
        for pair in pairs:
            hyp = self._words(pair.output)
            refs = [self._words(r) for r in pair_references(pair)]
            if self._too_long(hyp, refs) is not None:
                continue
            e, n = self._statistics(hyp, refs)
            edits += e
            ref_len += n
            counted += 1
        if not counted:
            return None
        return clip(100 - self._ter(edits, ref_len))
