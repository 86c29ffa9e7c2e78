"""The word diff on long texts: the same answer as before on sentences, a correct and
bounded one on 2,000-word texts.

The oracle for short pairs is the diff as it was before long texts were bounded: difflib's
SequenceMatcher over the word keys, written out here. Long pairs are checked against the
edit script that made them and against difflib itself.
"""

from __future__ import annotations

from difflib import SequenceMatcher

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meaningbench.annotation import diff
from meaningbench.annotation.diff import Segment, tokens, word_diff, word_key
from tests.annotation.long_texts import edit_text, german_like_text

SHORT_WORDS = ["the", "The", "cat", "cat,", "sat", "on", "mat.", "a", "dog", "ran", "und", "der"]


def _difflib_segments(source: str, output: str) -> tuple[list[Segment], list[Segment]]:
    """The rating screen's diff before long texts: difflib over word keys, runs merged."""
    a, b = tokens(source), tokens(output)
    keys_a, keys_b = [word_key(t) for t in a], [word_key(t) for t in b]
    matcher = SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        for side, lo, hi, toks in ((left, i1, i2, a), (right, j1, j2, b)):
            for tok in toks[lo:hi]:
                changed = op != "equal"
                if side and side[-1].changed == changed:
                    side[-1] = Segment(side[-1].text + tok, changed)
                else:
                    side.append(Segment(tok, changed))
    return left, right


def _word_flags(segments: list[Segment]) -> list[tuple[str, bool]]:
    """(word, changed) for every word of the text, in order."""
    return [(w, seg.changed) for seg in segments for w in seg.text.split()]


def _check_valid(source: str, output: str, left: list[Segment], right: list[Segment]) -> None:
    # Every character is shown exactly once, in order.
    assert "".join(s.text for s in left) == source
    assert "".join(s.text for s in right) == output
    for segs in (left, right):
        assert all(x.changed != y.changed for x, y in zip(segs, segs[1:], strict=False))
    # The words left unmarked are the same words, in the same order, on both sides.
    kept_left = [word_key(w) for w, changed in _word_flags(left) if not changed]
    kept_right = [word_key(w) for w, changed in _word_flags(right) if not changed]
    assert kept_left == kept_right


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(SHORT_WORDS), max_size=60),
    st.lists(st.sampled_from(SHORT_WORDS), max_size=60),
    st.sampled_from([" ", "  ", "\n", " \n"]),
)
def test_short_pairs_get_the_same_highlighting_as_before(a: list[str], b: list[str], sep: str):
    source, output = sep.join(a), " ".join(b)
    assert word_diff(source, output) == _difflib_segments(source, output)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(SHORT_WORDS), max_size=120),
    st.lists(st.sampled_from(SHORT_WORDS), max_size=120),
)
def test_the_bounded_path_gives_a_valid_diff_wherever_it_runs(a: list[str], b: list[str]) -> None:
    source, output = " ".join(a), " ".join(b)
    # No budget sends even these pairs through anchors (and autojunk where none exist).
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(diff, "EXACT_BUDGET", 0)
        left, right = diff._cached_diff.__wrapped__(source, output)
    _check_valid(source, output, list(left), list(right))


def test_long_pair_marks_exactly_the_edits() -> None:
    # Every word distinct and every inserted word new: the edit script is the only
    # correct answer.
    source = " ".join(f"Wort{k}{',' if k % 7 == 3 else ''}" for k in range(2_000))
    edited = edit_text(source, rate=0.15, seed=3, fresh=True)
    left, right = word_diff(edited.source, edited.output)
    _check_valid(edited.source, edited.output, left, right)
    src_flags, out_flags = _word_flags(left), _word_flags(right)
    assert len(src_flags) == 2_000
    assert {k for k, (_, changed) in enumerate(src_flags) if not changed} == set(
        edited.kept_source_words
    )
    assert {k for k, (_, changed) in enumerate(out_flags) if not changed} == set(
        edited.kept_output_words
    )
    # About 15 % of the words edited: a tenth deleted or replaced, the rest followed by
    # an insertion.
    assert 150 < 2_000 - len(edited.kept_source_words) < 250
    assert len(out_flags) - len(edited.kept_output_words) > 150


def test_long_german_pair_keeps_what_difflib_keeps() -> None:
    source = german_like_text(2_000, seed=11)
    edited = edit_text(source, rate=0.15, seed=12)
    left, right = word_diff(source, edited.output)
    _check_valid(source, edited.output, left, right)
    assert len(source.split()) >= 2_000 and len(source) > 12_000
    old_left, _ = _difflib_segments(source, edited.output)
    kept = sum(not changed for _, changed in _word_flags(left))
    kept_by_difflib = sum(not changed for _, changed in _word_flags(old_left))
    assert kept >= 0.98 * kept_by_difflib
    # Unchanged words stay unmarked: no more words are marked than the script edited,
    # give or take a word where a repeated short word could be matched either way.
    marked = sum(changed for _, changed in _word_flags(left))
    edited_words = len(source.split()) - len(edited.kept_source_words)
    assert marked <= 1.05 * edited_words + 5


def test_a_text_with_no_unique_word_still_diffs() -> None:
    # A refrain repeated: nothing is unique, the bounded path falls back to autojunk.
    source = " ".join(["la la le lu"] * 600)
    output = " ".join(["la la le lu"] * 300 + ["lo"] + ["la la le lu"] * 300)
    left, right = word_diff(source, output)
    _check_valid(source, output, left, right)
    assert [w for w, changed in _word_flags(right) if changed] == ["lo"]
