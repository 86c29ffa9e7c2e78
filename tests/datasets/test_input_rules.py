"""What a rating cell may hold, and JSON lines no data row may be: accepted values are
stored exactly, refused ones are quoted as written with file, row and column, and the
study is left byte for byte as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study
from tests.datasets.helpers import refused_unchanged, rows, write


@pytest.fixture
def study_path(tmp_path: Path) -> Path:
    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    import_file(study, write(tmp_path / "base.csv", "source,output,label\nA.,B.,50\n"))
    study.close()
    return path


ACCEPTED = [
    ("50", 50.0),
    ("72.5", 72.5),
    ("+7", 7.0),
    ("-0", 0.0),
    (".5", 0.5),
    ("5.", 5.0),
    ("007", 7.0),
    ("  42  ", 42.0),
    ("1e1", 10.0),
    ("2.5E-1", 0.25),
    ("99.99999999", 99.99999999),
    ("72,5", 72.5),  # a decimal comma: one comma, not three digits after it
    ("0,750", 0.75),  # a leading 0 cannot be a thousands group
    ("1,5", 1.5),
]


@pytest.mark.parametrize("delimiter", [";", "\t"])
@pytest.mark.parametrize(("cell", "value"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_plain_decimals_are_read_exactly(
    new_study, tmp_path: Path, cell: str, value: float, delimiter: str
) -> None:
    d = delimiter
    f = write(tmp_path / "r.txt", f"source{d}output{d}label\nS.{d}O.{d}{cell}\n")
    import_file(new_study, f, fmt="csv")
    assert rows(new_study, "SELECT value FROM rating") == [(value,)]


# (cell, delimiter, what the message must say besides the cell as written)
REFUSED = [
    ("5_0", ",", "digit separators"),
    ("５０", ",", "digits 0-9"),
    ("٣", ",", "digits 0-9"),
    ("1,000", "\t", "ambiguous"),
    ("12,500", ";", "ambiguous"),
    ("12,345,678", "\t", "thousands separators"),
    ("1.000,5", "\t", "thousands separators"),
    ("1 000", ",", "thousands separators"),
    ("100.0000001", ",", "outside the dimension's scale"),
    ("100,0000001", "\t", "outside the dimension's scale"),
    ("1e999", ",", "not a finite number"),
    ("nan", ",", "not a finite number"),
    ("-Infinity", ",", "not a finite number"),
    ("0x10", ",", "not a number"),
    ("- 5", ",", "not a number"),
    ("5 stars", ",", "not a number"),
    ("\u00a050", ",", "not a number"),
]


@pytest.mark.parametrize(("cell", "delimiter", "fragment"), REFUSED, ids=[r[0] for r in REFUSED])
def test_other_numbers_are_refused_as_written(
    study_path: Path, tmp_path: Path, cell: str, delimiter: str, fragment: str
) -> None:
    d = delimiter
    quoted = f'"{cell}"' if d in cell else cell
    f = write(tmp_path / "r.txt", f"source{d}output{d}label\nS.{d}O.{d}50\nT.{d}P.{d}{quoted}\n")
    err = refused_unchanged(study_path, lambda s: import_file(s, f, fmt="csv"))
    assert (err.file, err.row, err.column) == (str(f), 3, "label")
    shown = cell if "outside" not in fragment else cell.replace(",", ".")
    assert repr(shown) in str(err) or f" {shown} " in str(err), str(err)
    assert fragment in str(err)


def test_number_of_raters_shows_every_digit(study_path: Path, tmp_path: Path) -> None:
    f = write(tmp_path / "n.csv", "source,output,label,n_raters\nS.,O.,5,2.0000001\n")
    err = refused_unchanged(study_path, lambda s: import_file(s, f))
    assert (err.row, err.column) == (2, "n_raters")
    assert "2.0000001 is not a positive whole number" in str(err)


def test_json_numbers_are_numbers(new_study, tmp_path: Path) -> None:
    f = write(
        tmp_path / "n.jsonl",
        '{"source": "S.", "output": "O.", "label": 7.25}\n'
        '{"source": "T.", "output": "P.", "label": 1e1}\n'
        '{"source": "U.", "output": "Q.", "label": "72,5"}\n',
    )
    import_file(new_study, f)
    assert sorted(rows(new_study, "SELECT value FROM rating")) == [(7.25,), (10.0,), (72.5,)]


# (JSON line, what the message says); each is line 2 of the file.
PATHOLOGICAL = [
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"source": "S.", "output": "O.", "label": 1' + "0" * 5000 + "}", "more than 4,300 digits"),
    ('{"source": "S.", "output": "O.", "label": NaN}', "NaN is not a JSON value"),
    ('{"source": "S.", "output": "O.", "label": -Infinity}', "-Infinity is not a JSON value"),
    ('{"source": "S.", "output": "O.", "source": "T."}', "the key 'source' appears twice"),
    ('["S.", "O."]', "found a array; a JSON array?"),
    ('"just text"', "found a string"),
]


@pytest.mark.parametrize(("line", "fragment"), PATHOLOGICAL, ids=[p[1] for p in PATHOLOGICAL])
def test_pathological_json_lines_are_messages(
    study_path: Path, tmp_path: Path, line: str, fragment: str
) -> None:
    f = write(tmp_path / "p.jsonl", '{"source": "A.", "output": "B."}\n' + line + "\n")
    err = refused_unchanged(study_path, lambda s: import_file(s, f))
    assert (err.file, err.row) == (str(f), 2)
    assert fragment.replace("a array", "an array") in str(err).replace("a array", "an array")
    assert len(str(err)) < 300  # one line a person reads, not the line echoed back


def test_deep_json_on_the_command_line_is_one_line_and_exit_2(
    study_path: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    f = tmp_path / "deep.jsonl"
    f.write_text('{"source": ' + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8")
    before = study_path.read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", "import", str(study_path), str(f)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{f}, row 1: not valid JSON for a data row: brackets nested too deeply" in done.stderr
    assert study_path.read_bytes() == before


def test_a_deeply_bracketed_reference_cell_is_text(new_study, tmp_path: Path) -> None:
    deep = "[" * 50_000 + "]" * 50_000
    f = write(tmp_path / "r.csv", f"source,output,reference\nS.,O.,{deep}\n")
    import_file(new_study, f)
    (refs,) = rows(new_study, "SELECT refs FROM item")[0]
    assert json.loads(refs) == [deep]
