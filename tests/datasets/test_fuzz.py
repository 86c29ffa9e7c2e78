"""Random bytes and random CSV text: the importer imports or fails cleanly, nothing else."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meaningbench.datasets.importer import import_file
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from tests.datasets.helpers import count

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

COLUMN_NAMES = [
    "source",
    "output",
    "system",
    "annotator",
    "meaning",
    "fluency",
    "label",
    "dimension",
    "rating",
    "references",
    "reference_2",
    "original",
    "simplification",
    "WorkerId",
    "Answer.adequacy",
    "Answer.unknown",
    "kind",
    "dataset",
    "n_raters",
    "id",
    "junk",
    "",
]
CELL = st.one_of(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        max_size=30,
    ),
    st.sampled_from(["", "50", "100", "-1", "1e400", "nan", "72,5", '"', '""', "[]", '["a"]']),
    st.sampled_from(["meaning", "adequacy", "fluency", "regular", "control-identical", "x"]),
    st.integers(-5, 150).map(str),
)


def _counts(study: Study) -> tuple[int, ...]:
    return tuple(
        count(study, f"SELECT COUNT(*) FROM {table}")
        for table in ("dataset", "item", "rating", "annotator", "dimension")
    )


def _attempt(study: Study, path: Path, **kwargs: object) -> None:
    before = _counts(study)
    try:
        report = import_file(study, path, **kwargs)  # type: ignore[arg-type]
    except UserError:
        assert _counts(study) == before  # a failed import changed nothing
        return
    assert report.rows_read >= 1
    assert report.items_created + report.items_existing >= 1


@FUZZ
@given(data=st.binary(max_size=3000), suffix=st.sampled_from([".csv", ".tsv", ".jsonl", ".dat"]))
def test_random_bytes(new_study: Study, tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    _attempt(new_study, path)


@FUZZ
@given(
    columns=st.lists(st.sampled_from(COLUMN_NAMES), min_size=1, max_size=7),
    cells=st.lists(st.lists(CELL, min_size=0, max_size=8), min_size=0, max_size=6),
    delimiter=st.sampled_from([",", "\t", ";", "|"]),
    newline=st.sampled_from(["\n", "\r\n"]),
    fmt=st.sampled_from(["auto", "auto", "csv", "tsv", "long", "wide", "csmd", "pairs"]),
)
def test_random_csv_text(
    new_study: Study,
    tmp_path: Path,
    columns: list[str],
    cells: list[list[str]],
    delimiter: str,
    newline: str,
    fmt: str,
) -> None:
    # Joined by hand, not by csv.writer: quoting may be broken on purpose.
    lines = [delimiter.join(columns)] + [delimiter.join(row) for row in cells]
    path = tmp_path / "fuzz.csv"
    path.write_text(newline.join(lines) + newline, encoding="utf-8", newline="")
    _attempt(new_study, path, fmt=fmt)


@FUZZ
@given(
    objects=st.lists(
        st.dictionaries(
            st.sampled_from(COLUMN_NAMES),
            st.one_of(
                CELL,
                st.none(),
                st.integers(-10, 200),
                st.floats(allow_nan=True, allow_infinity=True),
                st.booleans(),
                st.lists(CELL, max_size=3),
                st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            ),
            max_size=8,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_random_jsonl_objects(new_study: Study, tmp_path: Path, objects: list[dict]) -> None:
    import json

    path = tmp_path / "fuzz.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    _attempt(new_study, path)
