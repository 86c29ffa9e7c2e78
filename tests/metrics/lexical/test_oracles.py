"""Each lexical metric against its reference library, called directly on the same inputs."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score.rouge_scorer import RougeScorer
from sacrebleu.metrics.lib_ter import translation_edit_rate as sacrebleu_ter

from meaningbench.metrics.base import Pair
from meaningbench.metrics.lexical.meteor import MeteorMetric
from meaningbench.metrics.lexical.readability import FkbleuMetric, FkglMetric, IbleuMetric
from meaningbench.metrics.lexical.rouge import Rouge1Metric, Rouge2Metric, RougeLMetric
from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric, ChrfMetric, TerMetric
from meaningbench.metrics.lexical.surface import CompressionRatioMetric, EditSimilarityMetric
from meaningbench.metrics.lexical.ter_core import translation_edit_rate
from meaningbench.metrics.lexical.text import wordpunct_tokens
from tests.jobs.studydata import csmd_rows

CASES = [
    Pair(1, "The cat sat on the mat.", "The cat sat on the mat.", ("The cat sat on the mat.",)),
    Pair(
        2, "The cat perched on the mat.", "Cat on mat.", ("The cat sat on the mat.", "A cat sat.")
    ),
    Pair(
        3,
        "About 95 species are currently accepted.",
        "About 95 you now get in.",
        (
            "About 95 species are currently known.",
            "About 95 species are now accepted.",
            "95 species are now accepted.",
        ),
    ),
    Pair(
        4, "Running dogs were barking loudly.", "The dogs ran and barked.", ("Dogs ran, barking.",)
    ),
    Pair(5, "Nothing in common here.", "", ("Nothing in common here.",)),
    Pair(6, "A B C", "a b c", ("A b C",)),
]


@pytest.fixture(scope="module")
def real_pairs(shared_datasets: Path) -> list[Pair]:
    rows = csmd_rows(shared_datasets, "dev")
    return [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(rows)]


def _values(metric, pairs):  # type: ignore[no-untyped-def]
    scores = metric.score_batch(pairs)
    assert all(s.error is None for s in scores), [s.error for s in scores]
    return scores


@pytest.mark.parametrize("lowercase", [False, True])
def test_bleu_is_sacrebleu_sentence_bleu(lowercase: bool) -> None:
    metric = BleuMetric(reference_mode="references", lowercase=lowercase)
    for pair, score in zip(CASES, _values(metric, CASES), strict=True):
        expected = sacrebleu.sentence_bleu(pair.output, list(pair.references), lowercase=lowercase)
        assert score.value == pytest.approx(expected.score, abs=1e-9)
        assert score.raw == score.value
        assert score.details["bp"] == pytest.approx(expected.bp)


def test_chrf_is_sacrebleu_sentence_chrf() -> None:
    for word_order in (0, 2):
        metric = ChrfMetric(word_order=word_order)
        for pair, score in zip(CASES, _values(metric, CASES), strict=True):
            expected = sacrebleu.sentence_chrf(
                pair.output, list(pair.references), word_order=word_order
            )
            assert score.value == pytest.approx(expected.score, abs=1e-9)


def test_ter_is_100_minus_sacrebleu_ter() -> None:
    for case_sensitive in (False, True):
        metric = TerMetric(case_sensitive=case_sensitive)
        for pair, score in zip(CASES, _values(metric, CASES), strict=True):
            expected = sacrebleu.sentence_ter(
                pair.output, list(pair.references), case_sensitive=case_sensitive
            ).score
            assert score.raw == pytest.approx(expected, abs=1e-9)
            assert score.value == pytest.approx(max(0.0, 100.0 - expected), abs=1e-9)


def test_sentence_metrics_on_real_sentences(real_pairs: list[Pair]) -> None:
    pairs = real_pairs[:60]
    bleu, chrf, ter = (_values(m(), pairs) for m in (BleuMetric, ChrfMetric, TerMetric))
    for i, pair in enumerate(pairs):
        refs = list(pair.references)
        assert bleu[i].value == pytest.approx(sacrebleu.sentence_bleu(pair.output, refs).score)
        assert chrf[i].value == pytest.approx(sacrebleu.sentence_chrf(pair.output, refs).score)
        assert ter[i].raw == pytest.approx(sacrebleu.sentence_ter(pair.output, refs).score)


TOKENS = st.lists(st.sampled_from(list("abcdef")), min_size=0, max_size=30)


@settings(max_examples=300, deadline=None)
@given(TOKENS, TOKENS)
def test_ter_core_counts_the_same_edits_as_sacrebleu(hyp: list[str], ref: list[str]) -> None:
    assert translation_edit_rate(hyp, ref) == sacrebleu_ter(hyp, ref)


def test_ter_core_with_very_different_lengths() -> None:
    # Long references against short hypotheses widen the beam; both must agree there too.
    rng = random.Random(7)
    for _ in range(40):
        hyp = [rng.choice("abcdefgh") for _ in range(rng.randint(0, 6))]
        ref = [rng.choice("abcdefgh") for _ in range(rng.randint(60, 140))]
        assert translation_edit_rate(hyp, ref) == sacrebleu_ter(hyp, ref)
        assert translation_edit_rate(ref, hyp) == sacrebleu_ter(ref, hyp)


def test_corpus_scores_are_sacrebleu_corpus_scores() -> None:
    pairs = CASES[:4]
    streams = [
        [p.references[i] if i < len(p.references) else None for p in pairs] for i in range(3)
    ]
    outputs = [p.output for p in pairs]
    assert BleuMetric().corpus_score(pairs) == pytest.approx(
        sacrebleu.corpus_bleu(outputs, streams).score
    )
    assert ChrfMetric().corpus_score(pairs) == pytest.approx(
        sacrebleu.corpus_chrf(outputs, streams).score
    )
    assert TerMetric().corpus_score(pairs) == pytest.approx(
        max(0.0, 100 - sacrebleu.corpus_ter(outputs, streams).score)
    )


@pytest.mark.parametrize(
    ("cls", "rouge_type"),
    [(Rouge1Metric, "rouge1"), (Rouge2Metric, "rouge2"), (RougeLMetric, "rougeL")],
)
def test_rouge_is_rouge_score_with_stemmer(cls: type, rouge_type: str) -> None:
    scorer = RougeScorer([rouge_type], use_stemmer=True)
    for pair, score in zip(CASES, _values(cls(), CASES), strict=True):
        if len(pair.references) == 1:
            expected = scorer.score(pair.references[0], pair.output)[rouge_type]
        else:
            expected = scorer.score_multi(list(pair.references), pair.output)[rouge_type]
        assert score.raw == pytest.approx(expected.fmeasure, abs=1e-12)
        assert score.value == pytest.approx(100 * expected.fmeasure, abs=1e-9)
        assert score.details["precision"] == pytest.approx(expected.precision)


def test_meteor_is_nltk_meteor_on_the_same_tokens() -> None:
    metric = MeteorMetric()
    assert metric.availability().ok, metric.availability().reason
    from nltk.corpus import wordnet
    from nltk.translate.meteor_score import meteor_score

    for pair, score in zip(CASES, _values(metric, CASES), strict=True):
        refs = [list(wordpunct_tokens(r)) for r in pair.references]
        expected = meteor_score(refs, list(wordpunct_tokens(pair.output)), wordnet=wordnet)
        assert score.raw == pytest.approx(expected, abs=1e-12)
        assert score.value == pytest.approx(100 * expected)


def test_meteor_uses_wordnet_synonyms() -> None:
    # NLTK's documented example (its doctest gives 0.6944): needs WordNet to match synonyms.
    from nltk.translate.meteor_score import meteor_score

    hyp = "It is a guide to action which ensures that the military always obeys the commands of the party"
    refs = (
        "It is a guide to action that ensures that the military will forever heed Party commands",
        "It is the guiding principle which guarantees the military forces always being under "
        "the command of the Party",
        "It is the practical guide for the army always to heed the directions of the party",
    )
    (score,) = MeteorMetric(reference_mode="references").score_batch([Pair(1, refs[0], hyp, refs)])
    assert round(score.raw, 4) == 0.6944
    assert score.raw == meteor_score([r.split() for r in refs], hyp.split())


@pytest.fixture
def textstat_ready() -> None:
    # textstat reads CMUdict through NLTK; the oracle needs it where our metric put it.
    from meaningbench.metrics.lexical.nltk_data import ensure_cmudict

    assert ensure_cmudict().ok


def test_fkgl_is_textstat_and_matches_a_hand_count(textstat_ready: None) -> None:
    import textstat

    metric = FkglMetric()
    assert metric.availability().ok
    pair = Pair(1, "The cat sat on the mat.", "The cat sat on the mat.", ())
    (score,) = _values(metric, [pair])
    # 6 words, 1 sentence, 6 syllables: 0.39·6 + 11.8·1 − 15.59
    assert score.raw == pytest.approx(0.39 * 6 + 11.8 * 1 - 15.59)
    assert score.value == score.raw
    for pair in CASES:
        (s,) = _values(metric, [pair])
        if not pair.output:  # textstat's 0 for a text without words is no grade
            assert (s.raw, s.value) == (None, None) and s.not_computed
            continue
        assert s.raw == pytest.approx(textstat.flesch_kincaid_grade(pair.output))
        assert s.details["source_grade"] == pytest.approx(
            textstat.flesch_kincaid_grade(pair.source)
        )


def test_ibleu_and_fkbleu_from_their_parts(textstat_ready: None) -> None:
    import textstat

    def sig(x: float) -> float:
        return 1 / (1 + math.exp(-x))

    for pair in CASES:
        refs = list(pair.references)
        to_refs = sacrebleu.sentence_bleu(pair.output, refs).score
        to_src = sacrebleu.sentence_bleu(pair.output, [pair.source]).score
        ibleu = 0.9 * to_refs - 0.1 * to_src
        (i_score,) = _values(IbleuMetric(reference_mode="references"), [pair])
        assert i_score.raw == pytest.approx(ibleu, abs=1e-9)
        assert i_score.value == pytest.approx(min(100, max(0, ibleu)), abs=1e-9)
        diff = textstat.flesch_kincaid_grade(pair.output) - textstat.flesch_kincaid_grade(
            pair.source
        )
        for sign, x in (("output_minus_source", diff), ("source_minus_output", -diff)):
            (f_score,) = _values(FkbleuMetric(reference_mode="references", fk_sign=sign), [pair])
            if not pair.output:  # its FKGL term is not defined
                assert f_score.raw is None and f_score.not_computed
                continue
            assert f_score.raw == pytest.approx(ibleu * sig(x), abs=1e-9)


def test_ibleu_with_the_source_as_reference_is_080_bleu() -> None:
    pair = CASES[3]
    (score,) = _values(IbleuMetric(), [Pair(1, pair.source, pair.output, (pair.source,))])
    assert score.raw == pytest.approx(
        0.8 * sacrebleu.sentence_bleu(pair.output, [pair.source]).score
    )


def test_surface_measures() -> None:
    pair = Pair(1, "kitten", "sitting", ("kitten",))
    (sim,) = _values(EditSimilarityMetric(), [pair])
    assert sim.details["distance"] == 3  # k→s, e→i, +g
    assert sim.raw == pytest.approx(1 - 3 / 7)
    (comp,) = _values(CompressionRatioMetric(), [pair])
    assert comp.raw == pytest.approx(7 / 6) and comp.value == pytest.approx(700 / 6)
    (bad,) = CompressionRatioMetric().score_batch([Pair(2, "", "x", ())])
    assert bad.error is not None and bad.value is None
