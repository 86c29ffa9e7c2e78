"""The options a sweep configures are metric options: `bertscore[idf_from=...]` and
`sbert_cosine[layer=N]`, with config hashes that keep runs made before them valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.sbert import SentenceCosineMetric
from meaningbench.metrics.neural.support.idf_corpus import idf_corpus, read_corpus_file
from tests.metrics.neural.sweep_helpers import write_corpus

PAIRS = [
    Pair(1, "The first source.", "An output.", ("The first source.",)),
    Pair(2, "The second source.", "Another output.", ("The second source.",)),
]


def test_the_default_configurations_keep_their_hashes() -> None:
    # The options were added after scores existed: unset, they are not in the hash.
    assert "idf_from" not in BertScoreMetric(idf=True).score_config()
    assert "layer" not in SentenceCosineMetric().score_config()
    assert SentenceCosineMetric(layer=3).config_hash() != SentenceCosineMetric().config_hash()


def test_idf_from_changes_nothing_without_idf() -> None:
    plain = BertScoreMetric(layer=3)
    with_corpus = BertScoreMetric(layer=3, idf_from="outputs")
    assert plain.config_hash() == with_corpus.config_hash()


def test_each_corpus_is_its_own_configuration(tmp_path: Path) -> None:
    hashes = set()
    corpus = write_corpus(tmp_path / "c.txt", ["one document", "another document"])
    for value in (None, "sources", "outputs", str(corpus)):
        metric = BertScoreMetric(layer=3, idf=True, idf_from=value)
        metric.prepare(PAIRS)
        hashes.add(metric.config_hash())
    # The default corpus (the sources, in source mode) and `sources` are the same texts
    # but not the same spelling of the configuration.
    assert len(hashes) == 4
    edited = BertScoreMetric(layer=3, idf=True, idf_from=str(corpus))
    edited.prepare(PAIRS)
    before = edited.config_hash()
    write_corpus(corpus, ["a changed corpus"])
    edited.prepare(PAIRS)
    assert edited.config_hash() != before  # an edited corpus makes the scores stale


def test_the_corpora_hold_the_texts_they_name(tmp_path: Path) -> None:
    assert idf_corpus(None, PAIRS) == ["The first source.", "The second source."]
    assert idf_corpus("sources", PAIRS) == ["The first source.", "The second source."]
    assert idf_corpus("outputs", PAIRS) == ["An output.", "Another output."]
    corpus = write_corpus(tmp_path / "c.txt", ["  first  ", "", "second"])
    assert idf_corpus(str(corpus), PAIRS) == ["first", "second"]
    with pytest.raises(UserError, match="reads the study's references"):
        idf_corpus("references", PAIRS)


def test_a_bad_corpus_file_says_what_is_wrong(tmp_path: Path) -> None:
    metric = BertScoreMetric(idf=True, idf_from=str(tmp_path / "missing.txt"))
    availability = metric.availability()
    assert not availability.ok and "missing.txt" in str(availability.reason)
    assert "sources, references, outputs or a text file" in str(availability.reason)
    empty = write_corpus(tmp_path / "empty.txt", [""])
    with pytest.raises(UserError, match="empty.txt: the idf corpus file has no text"):
        read_corpus_file(empty)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00abc")
    with pytest.raises(UserError, match="binary.txt: the idf corpus is not UTF-8"):
        read_corpus_file(binary)
