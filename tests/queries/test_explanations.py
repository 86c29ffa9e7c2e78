"""A token alignment as the matching view draws it: its lines, without widgets."""

from __future__ import annotations

from meaningbench.queries.explanations import Line, TokenAlignment, alignment_lines

# reference: [CLS] the cat sat [SEP]   candidate: [CLS] a cat was sitting [SEP]
ALIGNMENT = TokenAlignment(
    ref_tokens=("[CLS]", "the", "cat", "sat", "[SEP]"),
    cand_tokens=("[CLS]", "a", "cat", "was", "sitting", "[SEP]"),
    ref_best=(0, 1, 2, 4, 5),
    ref_sim=(0.99, 0.71, 0.97, 0.83, 0.98),
    cand_best=(0, 1, 2, 3, 3, 4),
    cand_sim=(0.99, 0.71, 0.97, 0.52, 0.83, 0.98),
    P=0.833,
    R=0.896,
    F=0.863,
)


def test_lines_are_the_greedy_matches_and_nothing_else() -> None:
    lines = set(alignment_lines(ALIGNMENT))
    assert lines == {
        Line("mutual", 0, 0, 0.99),
        Line("mutual", 1, 1, 0.71),
        Line("mutual", 2, 2, 0.97),
        Line("mutual", 3, 4, 0.83),  # sat → sitting and sitting → sat
        Line("mutual", 4, 5, 0.98),
        Line("precision", 3, 3, 0.52),  # was → sat, but sat chose sitting
    }
    assert ALIGNMENT.unpicked_cand() == {3}  # no reference token chose "was"
    assert ALIGNMENT.unpicked_ref() == set()
