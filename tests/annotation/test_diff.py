"""Word-level diff segments: lossless, and marking what a reader would call changed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from meaningbench.annotation.diff import Segment, word_diff


def _changed(segments: list[Segment]) -> list[str]:
    return [s.text.strip() for s in segments if s.changed]


def test_deleted_phrase_is_marked_in_the_source_only() -> None:
    left, right = word_diff("The cat sat on the mat.", "The cat sat.")
    # "sat" and "sat." are the same word; "on the mat." is gone from the output.
    assert _changed(left) == ["on the mat."]
    assert _changed(right) == []


def test_replaced_word_is_marked_on_both_sides() -> None:
    left, right = word_diff("He bought a red car yesterday.", "He bought a blue car yesterday.")
    assert _changed(left) == ["red"]
    assert _changed(right) == ["blue"]


def test_case_and_edge_punctuation_do_not_count() -> None:
    left, right = word_diff("Paris, the capital", "paris the capital")
    assert _changed(left) == [] and _changed(right) == []


def test_identical_texts_have_no_change() -> None:
    left, right = word_diff("Same words here.", "Same words here.")
    assert left == [Segment("Same words here.", False)] == right


@given(st.text(max_size=80), st.text(max_size=80))
def test_segments_give_the_texts_back_exactly(a: str, b: str) -> None:
    left, right = word_diff(a, b)
    assert "".join(s.text for s in left) == a
    assert "".join(s.text for s in right) == b
    # Runs alternate: neighbours never share a state.
    for segs in (left, right):
        assert all(x.changed != y.changed for x, y in zip(segs, segs[1:], strict=False))
