"""Item attribute values are kept exactly as the file gives them (line separators, NEL,
spaces around or alone included), so that export and import give them back; `info` and
the import summary list a long or unprintable value shortened and quoted, on its line."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study
from tests.datasets.test_item_attributes import attributes_by_text

# Each value is a category of one item; every one of them is a value, none is empty.
VALUES = {
    "Output one.": "a\u2028b",
    "Output two.": "\u0085lead",
    "Output three.": "   ",
    "Output four.": " padded ",
    "Output five.": "tab\tinside\r\nand lines",
    "Output six.": "\u00a0",
}


def _write_csv(path: Path, values: dict[str, str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["source", "output", "rater", "meaning", "note"])
        for output, value in values.items():
            writer.writerow(["The source.", output, "r1", "50", value])
    return path


def _notes(study) -> dict[str, str]:
    return {
        out: attrs.get("note") for (_src, out, _sys), attrs in attributes_by_text(study).items()
    }


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl"])
def test_attribute_values_are_kept_exactly_and_come_back_from_an_export(tmp_path, suffix):
    a = create_study(tmp_path / "a.mbstudy")
    report = import_file(a, _write_csv(tmp_path / "in.csv", VALUES))
    assert report.attribute_columns == ["note"]
    assert _notes(a) == VALUES
    out = tmp_path / f"ratings.{suffix}"
    export_study(a, out, ratings=True)
    b = create_study(tmp_path / "b.mbstudy")
    import_file(b, out)
    assert attributes_by_text(b) == attributes_by_text(a)
    assert _notes(b) == VALUES
    a.close()
    b.close()


def test_only_a_cell_with_nothing_in_it_is_empty(tmp_path):
    study = create_study(tmp_path / "s.mbstudy")
    import_file(study, _write_csv(tmp_path / "in.csv", {"Kept.": " ", "Empty.": ""}))
    assert _notes(study) == {"Kept.": " ", "Empty.": None}
    study.close()


def _info(path: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from meaningbench.cli import main; sys.exit(main())",
         "info", str(path), *args],
        capture_output=True, text=True, encoding="utf-8", timeout=300, check=True,
    )  # fmt: skip
    return proc.stdout


def test_info_lists_long_and_unprintable_values_shortened_and_quoted(tmp_path, capsys):
    long_value = "Long " + "x" * 4_999_995
    values = {**VALUES, "Output seven.": long_value, "Output eight.": "plain"}
    path = tmp_path / "s.mbstudy"
    assert main(["import", str(path), str(_write_csv(tmp_path / "in.csv", values))]) == 0
    # The import summary names the values the same way.
    summary = capsys.readouterr().out
    assert len(summary) < 10_000 and "… (5,000,000 characters) 1" in summary
    assert "'a\\u2028b' 1" in summary
    text = _info(path)
    lines = text.split("\n")
    [row] = [line for line in lines if line.startswith("  note (")]
    assert len(text) < 10_000 and len(row) < 1_500
    assert "'Long xxxx" in row and "… (5,000,000 characters) 1" in row
    assert "plain 1" in row and "'a\\u2028b' 1" in row
    assert "'   ' 1" in row and "'tab\\tinside\\r\\nand lines' 1" in row
    # For programs, --json gives every listed value whole.
    listed = json.loads(_info(path, "--json"))["attributes"][0]["values"]
    assert {v["value"] for v in listed} == set(values.values())
