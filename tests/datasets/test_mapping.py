"""Column mapping: --map parsing, synonyms, misspelling hints, keys equal to meaningbench.core.keys."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meaningbench.core.keys import normalise_text, pair_key, source_group_key
from meaningbench.datasets.importer import item_keys
from meaningbench.datasets.mapping import (
    closest,
    dimension_for,
    parse_map_options,
    rating_column_stem,
    reference_columns,
)
from meaningbench.datasets.plan import DimInfo, make_plan
from meaningbench.errors import InputError

KNOWN = {n: DimInfo(n) for n in ("meaning", "fluency", "simplicity")}


def test_parse_map_options() -> None:
    m = parse_map_options(
        [
            "source=Input.original",
            "references=ref1",
            'references=["ref2", "ref 3"]',
            "meaning=Answer.adequacy",
            "dimension.fluency=grammar",
            "output = simp ",
        ]
    )
    assert m.fields == {"source": "Input.original", "output": "simp"}
    assert m.references == ["ref1", "ref2", "ref 3"]
    assert m.dimensions == {"meaning": "Answer.adequacy"}
    assert m.dimension_values == {"grammar": "fluency"}


@pytest.mark.parametrize(
    "entry", ["source", "=col", "source=", "references=[1, 2]", "references=[bad", "2bad=col"]
)
def test_bad_map_entries(entry: str) -> None:
    with pytest.raises(InputError):
        parse_map_options([entry])


def test_a_field_mapped_twice_is_refused() -> None:
    with pytest.raises(InputError, match="mapped twice"):
        parse_map_options(["source=a", "source=b"])


def test_dimension_synonyms() -> None:
    assert dimension_for("Adequacy", KNOWN) == "meaning"
    assert dimension_for("grammaticality", KNOWN) == "fluency"
    assert dimension_for("coherence", KNOWN) is None
    assert dimension_for("adequacy", {"fluency": KNOWN["fluency"]}) is None


@pytest.mark.parametrize(
    ("column", "stem", "marked"),
    [
        ("Answer.adequacy", "adequacy", True),
        ("rating_fluency", "fluency", True),
        ("meaning_rating", "meaning", False),
        ("sari_score", "sari", False),
        ("fluency", "fluency", False),
        ("Input.original", "Input.original", False),
    ],
)
def test_rating_column_stem(column: str, stem: str, marked: bool) -> None:
    assert rating_column_stem(column) == (stem, marked)


def test_reference_columns_and_closest() -> None:
    cols = ["source", "Reference 1", "ref_2", "refs", "references", "referee", "output"]
    assert reference_columns(cols) == ["Reference 1", "ref_2", "refs", "references"]
    assert closest("Answer.adequcy", ["Answer.adequacy", "Answer.fluency"]) == "Answer.adequacy"
    assert closest("zzz", ["source", "output"]) is None


def test_detected_plans() -> None:
    path = Path("x.csv")
    simpda = [
        "WorkerId",
        "Input.id",
        "Input.original",
        "Input.simplified",
        "Input.system",
        "Answer.adequacy",
        "Answer.fluency",
        "Answer.simplicity",
    ]
    plan = make_plan(simpda, parse_map_options([]), shape=None, known=KNOWN, path=path)
    assert plan.shape == "wide" and plan.annotator == "WorkerId" and plan.id == "Input.id"
    assert plan.dims == {
        "meaning": "Answer.adequacy",
        "fluency": "Answer.fluency",
        "simplicity": "Answer.simplicity",
    }
    csmd = make_plan(
        ["original", "simplification", "label"],
        parse_map_options([]),
        shape=None,
        known=KNOWN,
        path=path,
    )
    assert csmd.shape == "csmd" and csmd.labels == {"meaning": "label"}
    long = make_plan(
        [
            "source",
            "simplification",
            "sentence_id",
            "simplification_type",
            "system_name",
            "aspect",
            "rating",
        ],
        parse_map_options([]),
        shape=None,
        known=KNOWN,
        path=path,
    )
    assert long.shape == "long" and long.system == "system_name" and long.dimension == "aspect"
    assert long.id == "sentence_id" and long.ignored == []
    assert long.attributes == ["simplification_type"]
    # A lone `score` column is not the long shape's rating.
    pairs = make_plan(
        ["source", "output", "score"], parse_map_options([]), shape=None, known=KNOWN, path=path
    )
    assert pairs.shape == "pairs" and pairs.rating is None and pairs.ignored == ["score"]


def test_two_columns_for_one_dimension_are_refused() -> None:
    with pytest.raises(InputError, match="two columns hold 'meaning'"):
        make_plan(
            ["source", "output", "annotator", "meaning", "adequacy"],
            parse_map_options([]),
            shape=None,
            known=KNOWN,
            path=Path("x.csv"),
        )


WS = st.text(
    alphabet=st.sampled_from(
        list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u3000\u200bab.é")
    ),
    max_size=20,
)


@given(source=WS, output=WS, system=st.one_of(st.none(), st.text(max_size=5)))
def test_item_keys_equal_the_reference_keys(source: str, output: str, system: str | None) -> None:
    group, key = item_keys(source, output, system)
    assert group == source_group_key(source)
    assert key == pair_key(source, output, system)
    # Normalisation collapses whitespace exactly as a regular expression over \s does.
    assert normalise_text(source) == re.sub(r"\s+", " ", source).strip()
