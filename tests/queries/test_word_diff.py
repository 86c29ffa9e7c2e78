"""The inline word diff: kept + added words give the output, kept + dropped give the source."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from meaningbench.queries.word_diff import diff_counts, diff_html, inline_diff

WORDS = st.lists(
    st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "dog", "ran"]), max_size=12
)


def _norm(text: str) -> list[str]:
    return text.split()


@settings(max_examples=200, deadline=None)
@given(WORDS, WORDS)
def test_diff_rebuilds_both_texts(a: list[str], b: list[str]) -> None:
    source, output = " ".join(a), " ".join(b)
    ops = inline_diff(source, output)
    assert _norm("".join(o.text + " " for o in ops if o.op != "delete")) == b
    assert _norm("".join(o.text + " " for o in ops if o.op != "insert")) == a
    kept, added, deleted = diff_counts(ops)
    assert kept + added == len(b) and kept + deleted == len(a)


def test_case_and_edge_punctuation_do_not_count_as_changes() -> None:
    ops = inline_diff("Paris, the capital.", "paris the Capital")
    assert [o.op for o in ops] == ["equal"]


def test_html_marks_added_and_struck_words() -> None:
    html = diff_html(inline_diff("The cat sat.", "The dog sat."))
    assert "line-through" in html and ">cat</span>" in html
    assert ">dog</span>" in html and html.startswith("The ")
    # a dropped final word is still separated from the output's last word
    tail = diff_html(inline_diff("The storm passed quickly.", "The storm passed."))
    assert "passed. <span" in tail and tail.endswith(">quickly.</span>")
