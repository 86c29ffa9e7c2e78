"""Readers: containers, delimiters and row numbers as a spreadsheet shows them."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.core.readers import open_csv, open_table
from meaningbench.errors import InputError
from tests.datasets.helpers import write


def test_row_numbers_count_multi_line_records_once(tmp_path: Path) -> None:
    f = write(tmp_path / "m.csv", 'source,output\n"a\nb\nc",x\n\nd,e\n')
    src = open_table(f)
    got = list(src.rows())
    # Row 2 spans three lines; the blank line is row 3; "d,e" is row 4.
    assert got == [(2, ["a\nb\nc", "x"]), (4, ["d", "e"])]


def test_trailing_empty_fields_are_tolerated(tmp_path: Path) -> None:
    f = write(tmp_path / "t.csv", "source,output\nS.,O.,,\n")
    assert list(open_table(f).rows()) == [(2, ["S.", "O."])]


def test_decode_error_names_the_row_of_a_multi_line_record(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_bytes(b'source,output\n"one\ntwo",x\n"three\nfo\xffur",y\n')
    with pytest.raises(InputError) as info:
        list(open_table(f).rows())
    assert info.value.row == 3


def test_encoding_option_reads_other_encodings(tmp_path: Path) -> None:
    f = write(tmp_path / "l.csv", "source,output\nCafé.,Café.\n", encoding="cp1252")
    with pytest.raises(InputError, match="--encoding"):
        list(open_table(f).rows())
    assert list(open_table(f, encoding="cp1252").rows()) == [(2, ["Café.", "Café."])]


def test_jsonl_detected_by_content_and_blank_lines_skipped(tmp_path: Path) -> None:
    f = write(tmp_path / "data.txt2", '\n{"a": 1}\n\n{"b": 2, "a": 3}\n')
    src = open_table(f)
    assert src.container == "jsonl" and src.columns == ["a", "b"]
    assert [n for n, _ in src.rows()] == [2, 4]


def test_forced_delimiter(tmp_path: Path) -> None:
    f = write(tmp_path / "x.csv", "a;b;c,d\n1;2;3,4\n")
    assert open_table(f).columns == ["a", "b", "c,d"]
    assert open_csv(f, delimiter=",").columns == ["a;b;c", "d"]


def test_header_without_a_name(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no name"):
        open_table(write(tmp_path / "x.csv", "source,,output\n1,2,3\n"))
