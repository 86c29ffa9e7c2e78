"""SARI against the published values (HF evaluate's docs, EASSE's README), against a plain
Counter-based reading of the formula, and its properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meaningbench.metrics.base import Pair
from meaningbench.metrics.lexical.sari import (
    corpus_sari,
    easse_item_sari,
    explain_sari,
    sentence_sari,
)
from meaningbench.metrics.lexical.sari_metric import SariMetric
from meaningbench.metrics.lexical.text import normalize
from meaningbench.metrics.names import metric_canonical_name

SOURCE = "About 95 species are currently accepted ."
REFERENCES = [
    "About 95 species are currently known .",
    "About 95 species are now accepted .",
    "95 species are now accepted .",
]
PUBLISHED_SENTENCE = [
    ("About 95 you now get in .", 26.953601953601954),
    ("About 95 species are now agreed .", 61.709656084656075),
    ("About 95 species are currently agreed .", 50.88681849551415),
]


@pytest.mark.parametrize(("output", "expected"), PUBLISHED_SENTENCE)
def test_sentence_sari_matches_published_values(output: str, expected: float) -> None:
    assert sentence_sari(SOURCE, output, REFERENCES).sari == pytest.approx(expected, abs=1e-9)


def test_identical_output_with_source_as_reference_scores_100() -> None:
    score = sentence_sari(SOURCE, SOURCE, [SOURCE])
    assert score.sari == pytest.approx(100.0, abs=1e-9)
    assert (score.add, score.keep, score.delete) == (100.0, 100.0, 100.0)


def test_corpus_sari_matches_easse_readme() -> None:
    sources = ["About 95 species are currently accepted.", "The cat perched on the mat."]
    outputs = ["About 95 you now get in.", "Cat on mat."]
    streams = [
        ["About 95 species are currently known.", "The cat sat on the mat."],
        ["About 95 species are now accepted.", "The cat is on the mat."],
        ["95 species are now accepted.", "The cat sat."],
    ]
    per_item = [list(refs) for refs in zip(*streams, strict=True)]
    score = corpus_sari(sources, outputs, per_item)
    assert score.sari == pytest.approx(33.17472563619544, abs=1e-9)
    assert score.sari == pytest.approx((score.add + score.keep + score.delete) / 3, abs=1e-12)


def test_easse_formula_on_an_identical_item_scores_a_third() -> None:
    # Hand computation: nothing is added (add F1 = 0 with EASSE's 0 for an empty
    # denominator), everything is kept correctly (keep F1 = 1), nothing is deleted (0).
    score = easse_item_sari(SOURCE, SOURCE, [SOURCE])
    assert score.add == 0.0
    assert score.keep == pytest.approx(100.0)
    assert score.delete == 0.0
    assert score.sari == pytest.approx(100 / 3)


def test_deletion_precision_option_differs_from_f1() -> None:
    sources = ["the old man sat on the very old chair ."]
    outputs = ["the man sat on the chair ."]
    refs = [["the man sat on the old chair .", "a man sat ."]]
    f1 = corpus_sari(sources, outputs, refs, deletion="f1")
    precision = corpus_sari(sources, outputs, refs, deletion="precision")
    assert f1.add == precision.add and f1.keep == precision.keep
    assert f1.delete != precision.delete


# A reading of the formula (Xu et al. 2016; HF evaluate's conventions) with Counter algebra,
# written independently of the implementation, which works on plain dicts in one pass.
def _formula_sari(source: str, output: str, references: list[str]) -> float:
    def grams(text: str, n: int) -> Counter:
        toks = normalize(text).split(" ")
        return Counter(" ".join(toks[i : i + n]) for i in range(len(toks) - n + 1))

    k = len(references)
    keep_total = del_total = add_total = 0.0
    for n in range(1, 5):
        s, c = grams(source, n), grams(output, n)
        r = sum((grams(ref, n) for ref in references), Counter())
        sk = Counter({g: k * v for g, v in s.items()})
        ck = Counter({g: k * v for g, v in c.items()})
        kept = sk & ck
        kept_good = kept & r
        kept_ref = sk & r
        p = sum(kept_good[g] / kept[g] for g in kept) / len(kept) if kept else 1
        rc = sum(kept_good.values()) / sum(kept_ref.values()) if kept_ref else 1
        keep_total += 2 * p * rc / (p + rc) if p + rc > 0 else 0
        deleted = sk - ck
        deleted_good = deleted - r
        del_total += (
            sum(deleted_good[g] / deleted[g] for g in deleted) / len(deleted) if deleted else 1
        )
        added = set(c) - set(s)
        good = added & set(r)
        ref_added = set(r) - set(s)
        ap = len(good) / len(added) if added else 1
        ar = len(good) / len(ref_added) if ref_added else 1
        add_total += 2 * ap * ar / (ap + ar) if ap + ar > 0 else 0
    return 100 * (keep_total + del_total + add_total) / 12


WORDS = st.sampled_from(
    [
        "the",
        "a",
        "cat",
        "dog",
        "sat",
        "on",
        "mat",
        "big",
        "small",
        "and",
        ",",
        ".",
        "runs",
        "quickly",
    ]
)
SENTENCE = st.lists(WORDS, min_size=0, max_size=14).map(" ".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SENTENCE, SENTENCE, st.lists(SENTENCE, min_size=1, max_size=3))
def test_sentence_sari_follows_the_formula_and_stays_in_range(
    source: str, output: str, references: list[str]
) -> None:
    score = sentence_sari(source, output, references)
    assert 0.0 <= score.sari <= 100.0
    assert score.sari == pytest.approx(_formula_sari(source, output, references), abs=1e-9)
    for part in (score.add, score.keep, score.delete):
        assert 0.0 <= part <= 100.0


@settings(max_examples=100, deadline=None)
@given(SENTENCE.filter(lambda s: s.strip() != ""))
def test_identity_property(sentence: str) -> None:
    assert sentence_sari(sentence, sentence, [sentence]).sari == pytest.approx(100.0, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(SENTENCE, SENTENCE, st.lists(SENTENCE, min_size=1, max_size=3)),
        min_size=1,
        max_size=5,
    )
)
def test_corpus_sari_in_range(rows: list[tuple[str, str, list[str]]]) -> None:
    for deletion in ("f1", "precision"):
        score = corpus_sari(
            [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], deletion=deletion
        )
        assert 0.0 <= score.sari <= 100.0


def test_explanation_adds_up_and_lists_ngrams() -> None:
    output = "About 95 species are now agreed ."
    exp = explain_sari(SOURCE, output, REFERENCES)
    assert exp.sari == pytest.approx(61.709656084656075, abs=1e-9)
    assert exp.sari == pytest.approx((exp.add + exp.keep + exp.delete) / 3)
    assert [o.n for o in exp.ngrams] == [1, 2, 3, 4]
    unigrams = exp.ngrams[0]
    # Read off the sentences: "now" and "agreed" are new; "now" is in two references.
    assert set(unigrams.added) == {"now", "agreed"}
    assert unigrams.added_supported == ("now",)
    # "currently" and "accepted" are gone; some reference drops each of them ("currently"
    # two of three, "accepted" one of three), so both deletions earn credit.
    assert set(unigrams.deleted) == {"currently", "accepted"}
    assert set(unigrams.deleted_supported) == {"currently", "accepted"}
    assert "species" in unigrams.kept and "species" in unigrams.kept_supported
    assert unigrams.add_precision == pytest.approx(1 / 2)
    assert exp.output_tokens == tuple(normalize(output).split(" "))


def test_metric_item_details_and_variants() -> None:
    pair = Pair(1, SOURCE, "About 95 you now get in .", tuple(REFERENCES))
    (item,) = SariMetric(reference_mode="references").score_batch([pair])
    assert item.value == pytest.approx(26.953601953601954, abs=1e-9)
    assert item.value == pytest.approx(
        (item.details["add"] + item.details["keep"] + item.details["delete"]) / 3
    )
    (easse,) = SariMetric(item_variant="easse").score_batch([pair])
    expected = easse_item_sari(SOURCE, pair.output, REFERENCES)
    assert easse.value == pytest.approx(expected.sari)
    assert (
        metric_canonical_name(SariMetric(item_variant="easse"))
        == "sari[refs=source,item_variant=easse]"
    )
    with pytest.raises(ValueError):
        SariMetric(item_variant="paper")
