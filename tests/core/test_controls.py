"""Control texts: word soups, sampled unrelated sentences, Appraise's degraded items."""

from __future__ import annotations

import random

import pytest
import sacrebleu
from rouge_score import rouge_scorer

from meaningbench.core.controls import (
    build_vocabulary,
    degraded_phrase_length,
    make_degraded,
    make_identical,
    make_word_soup,
    sample_unrelated,
)

SENTENCES = [
    "The cat sat on the mat near the door.",
    "Stock markets fell sharply after the central bank raised interest rates.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "The committee postponed its decision until next spring.",
    "A cat sat on a mat by the door.",
    "Volcanic eruptions can cool the global climate for several years.",
    "Children learn languages faster than most adults do.",
    "The bridge was closed because of strong winds.",
    "The cat sat on the mat near the window.",
]


def test_identical_is_the_source() -> None:
    s = "  Keep  this exactly. "
    assert make_identical(s) == s


def test_vocabulary_is_sorted_lowercase_words() -> None:
    vocab = build_vocabulary(["The cat, the Dog 42!", "dog's bone"])
    assert vocab == sorted(vocab)
    assert "the" in vocab and "The" not in vocab
    assert "42" not in vocab and "," not in vocab
    assert "dog's" in vocab


def test_word_soup_is_length_matched_and_outside_the_source() -> None:
    vocab = build_vocabulary(SENTENCES)
    for source in SENTENCES:
        soup = make_word_soup(source, vocab, random.Random(3))
        soup_words = soup.split()
        n_words = len([w for w in source.replace(".", " ").split() if w.isalpha()])
        assert len(soup_words) == n_words
        assert not {w.lower() for w in soup_words} & {w.lower().strip(".") for w in source.split()}
        assert len(set(soup_words)) == len(soup_words)  # no repeats when the pool allows
    assert make_word_soup(SENTENCES[0], vocab, random.Random(7)) == make_word_soup(
        SENTENCES[0], vocab, random.Random(7)
    )


def test_word_soup_needs_a_word_outside_the_source() -> None:
    with pytest.raises(ValueError):
        make_word_soup("the cat", ["the", "Cat"], random.Random(0))


def _oracle_overlap(a: str, b: str) -> tuple[float, float]:
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    r = scorer.score(a, b)
    rouge = max(r[k].fmeasure for k in ("rouge1", "rouge2", "rougeL"))
    bleu = max(
        sacrebleu.sentence_bleu(a, [b]).score,
        sacrebleu.sentence_bleu(b, [a]).score,
    )
    return rouge, bleu


def test_sampled_unrelated_is_under_the_overlap_bar() -> None:
    rng = random.Random(11)
    found = 0
    for source in SENTENCES:
        unrelated = sample_unrelated(source, SENTENCES, rng)
        assert unrelated is not None
        assert unrelated != source
        rouge, bleu = _oracle_overlap(source, unrelated)
        assert rouge < 0.20 and bleu < 20.0
        found += 1
    assert found == len(SENTENCES)


def test_sampled_unrelated_none_when_everything_overlaps() -> None:
    close = ["The cat sat on the mat near the window.", "The cat sat on the mat near the door."]
    assert sample_unrelated(close[0], close, random.Random(0)) is None
    assert sample_unrelated(close[0], [], random.Random(0)) is None


@pytest.mark.parametrize(
    ("n", "expected"),
    [(1, 1), (2, 2), (5, 2), (6, 3), (8, 3), (9, 4), (15, 4), (16, 5), (20, 5), (21, 6), (40, 6)],
)
def test_degraded_phrase_length_table(n: int, expected: int) -> None:
    assert degraded_phrase_length(n) == expected


@pytest.mark.parametrize("n", [3, 5, 6, 8, 9, 12, 15, 16, 20, 21, 30])
def test_degraded_replaces_a_same_length_inner_phrase(n: int) -> None:
    output = " ".join(f"w{i}" for i in range(n))
    donors = [" ".join(f"d{i}" for i in range(12)), "dx dy"]
    for seed in range(20):
        text, d = make_degraded(output, donors, random.Random(seed))
        tokens = text.split()
        assert len(tokens) == n
        assert d["length"] == degraded_phrase_length(n)
        start, length = d["start"], d["length"]
        assert tokens[start : start + length] == d["donor_span"].split()
        assert all(t.startswith("d") for t in tokens[start : start + length])
        assert tokens[:start] == output.split()[:start]
        assert tokens[start + length :] == output.split()[start + length :]
        assert d["replaced"] == " ".join(output.split()[start : start + length])
        if n >= length + 2:  # away from the edges when possible
            assert start >= 1 and start + length <= n - 1


def test_degraded_keeps_surrounding_text_verbatim_and_is_reproducible() -> None:
    output = "Hello,  world   this is\ta test of spacing ."
    a = make_degraded(output, SENTENCES, random.Random(5))
    b = make_degraded(output, SENTENCES, random.Random(5))
    assert a == b
    text, d = a
    assert text.startswith("Hello,  ")  # first token kept and spacing untouched
    assert text.endswith(" .")


def test_degraded_pools_short_donors_and_rejects_empty() -> None:
    text, d = make_degraded("one two three four five six seven", ["x", "y z"], random.Random(1))
    assert d["donor_index"] == -1 and d["length"] == 3
    assert len(text.split()) == 7
    with pytest.raises(ValueError):
        make_degraded("   ", SENTENCES, random.Random(0))
    with pytest.raises(ValueError):
        make_degraded("one two three four five six seven", ["x"], random.Random(0))
