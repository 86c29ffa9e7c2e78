"""Scene proposal rules on hand-written dependency parses (spaCy's English labels and UD)."""

from __future__ import annotations

from meaningbench.metrics.structural.propose import DepToken, parser_status, propose_from_parse


def parse(rows: str) -> list[DepToken]:
    """One token per line: text head dep pos."""
    out = []
    for line in rows.strip().splitlines():
        text, head, dep, pos = line.split()
        out.append(DepToken(text, int(head), dep, pos))
    return out


def summary(tokens: list[DepToken]):
    return [
        (
            [tokens[i].text for i in s.main_relation],
            [
                (
                    " ".join(tokens[i].text for i in p.tokens),
                    [tokens[i].text for i in p.centre],
                    p.remote,
                )
                for p in s.participants
            ],
        )
        for s in propose_from_parse(tokens)
    ]


def test_two_clauses_two_scenes_with_prepositional_participant() -> None:
    tokens = parse(
        """
        The 1 det DET
        cat 2 nsubj NOUN
        sat 2 ROOT VERB
        on 2 prep ADP
        the 5 det DET
        mat 3 pobj NOUN
        and 2 cc CCONJ
        the 8 det DET
        dog 9 nsubj NOUN
        barked 2 conj VERB
        . 2 punct PUNCT
        """
    )
    assert summary(tokens) == [
        (["sat"], [("The cat", ["cat"], False), ("on the mat", ["mat"], False)]),
        (["barked"], [("the dog", ["dog"], False)]),
    ]
    assert all(s.origin == "parser" for s in propose_from_parse(tokens))


def test_shared_subject_of_coordinated_verbs_is_a_remote_participant() -> None:
    tokens = parse(
        """
        The 1 det DET
        cat 2 nsubj NOUN
        sat 2 ROOT VERB
        and 2 cc CCONJ
        purred 2 conj VERB
        . 2 punct PUNCT
        """
    )
    assert summary(tokens) == [
        (["sat"], [("The cat", ["cat"], False)]),
        (["purred"], [("The cat", ["cat"], True)]),
    ]


def test_copula_is_a_state_in_both_label_sets() -> None:
    spacy_style = parse(
        """
        John 1 nsubj PROPN
        is 1 ROOT AUX
        tall 1 acomp ADJ
        . 1 punct PUNCT
        """
    )
    ud_style = parse(
        """
        John 2 nsubj PROPN
        is 2 cop AUX
        tall 2 root ADJ
        . 2 punct PUNCT
        """
    )
    assert summary(spacy_style) == [(["tall"], [("John", ["John"], False)])]
    assert summary(ud_style) == [(["tall"], [("John", ["John"], False)])]


def test_relative_clause_takes_the_modified_noun_and_compounds_stay_in_the_centre() -> None:
    tokens = parse(
        """
        The 1 det DET
        man 5 nsubj NOUN
        who 3 nsubj PRON
        came 1 relcl VERB
        yesterday 3 npadvmod NOUN
        left 5 ROOT VERB
        for 5 prep ADP
        New 8 compound PROPN
        York 6 pobj PROPN
        . 5 punct PUNCT
        """
    )
    assert summary(tokens) == [
        (["came"], [("man", ["man"], True)]),
        (
            ["left"],
            [
                ("The man who came yesterday", ["man"], False),
                ("for New York", ["New", "York"], False),
            ],
        ),
    ]


def test_parser_status_explains_itself() -> None:
    ok, model, message = parser_status()
    assert isinstance(ok, bool)
    assert message
    if not ok:
        assert "spaCy" in message and model == ""
