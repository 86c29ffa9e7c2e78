"""Bad input fails with file, row and column, and leaves the study exactly as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study, open_study
from meaningbench.errors import InputError
from meaningbench.runtime import Cancelled, CancelToken
from tests.datasets.helpers import refused_unchanged, snapshot, write

GOOD = (
    "source,output,system,annotator,meaning\n"
    "The old bridge was closed.,The bridge closed.,s1,r1,80\n"
    "The old bridge was closed.,Bridge shut.,s2,r1,70\n"
)


@pytest.fixture
def study_path(tmp_path: Path) -> Path:
    """A study with some content, closed (so its WAL is checkpointed into the main file)."""
    path = tmp_path / "s.mbstudy"
    study = create_study(path)
    import_file(study, write(tmp_path / "good.csv", GOOD), dataset="base")
    study.close()
    assert not Path(f"{path}-wal").exists()
    return path


CASES: list[tuple[str, bytes, dict[str, Any], int | None, str | None, str]] = [
    (
        "latin1.csv",
        "source,output\nS.,O.\nCafé noir.,Coffee.\n".encode("latin-1"),
        {},
        3,
        None,
        "not valid utf-8",
    ),
    ("utf16.csv", "source,output\nS.,O.\n".encode("utf-16"), {}, None, None, "UTF-16"),
    ("binary.csv", b"\x00\x01\x02\x03garbage\xff\xfe\x00", {}, None, None, "not a text file"),
    ("book.csv", b"PK\x03\x04\x14\x00\x06\x00rest-of-a-workbook", {}, None, None, "xlsx"),
    ("empty.csv", b"", {}, None, None, "empty"),
    ("header.csv", b"source,output\n", {}, None, None, "no data rows"),
    ("nosrc.csv", b"text_a,output\nS.,O.\n", {}, 1, None, "no column for the source"),
    ("typo.csv", b"orignal,simplification,label\nS.,O.,5\n", {}, 1, None, "did you mean 'orignal'"),
    (
        "map.csv",
        b"original,simplification\nS.,O.\n",
        {"mapping": ["source=orignal"]},
        1,
        "orignal",
        "did you mean 'original'",
    ),
    (
        "nan.csv",
        b"original,simplification,label\nS.,O.,5\nT.,P.,abc\n",
        {},
        3,
        "label",
        "not a number",
    ),
    (
        "nan2.csv",
        b"original,simplification,label\nS.,O.,nan\n",
        {},
        2,
        "label",
        "not a finite number",
    ),
    (
        "scale.csv",
        b"original,simplification,label\nS.,O.,120\n",
        {},
        2,
        "label",
        "outside the dimension's scale",
    ),
    ("neg.csv", b"source,output,annotator,fluency\nS.,O.,a,-5\n", {}, 2, "fluency", "outside"),
    ("esrc.csv", b"source,output\nS.,O.\n  ,P.\n", {}, 3, "source", "source is empty"),
    (
        "ragged.csv",
        b"source,output\nS.,O.\nT.,P.,extra\n",
        {},
        3,
        None,
        "3 fields, the header has 2",
    ),
    ("quote.csv", b'source,output\nS.,O.\n"T.,P.\nU.,Q.\n', {}, 3, None, "closing quote"),
    ("dupcol.csv", b"source,output,source\nS.,O.,T.\n", {}, 1, None, "twice"),
    (
        "dim.csv",
        b"source,output,annotator,aspect,rating\nS.,O.,a,coherence,5\n",
        {},
        2,
        "aspect",
        "no dimension 'coherence'",
    ),
    (
        "marked.csv",
        b"source,output,WorkerId,Answer.coherence\nS.,O.,a,5\n",
        {},
        1,
        "Answer.coherence",
        "--map coherence=Answer.coherence",
    ),
    (
        "noann.csv",
        b"source,output,annotator,meaning\nS.,O.,a,5\nT.,P.,,6\n",
        {},
        3,
        "annotator",
        "rater id is empty on 1 rows (lines 3) while other rows name their rater",
    ),
    ("kind.csv", b"source,output,kind\nS.,O.,weird\n", {}, 2, "kind", "unknown item kind"),
    (
        "akind.csv",
        b"source,output,annotator,dimension,rating,annotator_kind\nS.,O.,r1,meaning,5,aggregate\n",
        {},
        2,
        "rating",
        "is named in the study but aggregate here",
    ),
    (
        "long.csv",
        b"source,output,annotator,dimension,rating\nS.,O.,a,meaning,\n",
        {},
        2,
        "rating",
        "rating is empty",
    ),
    ("wide.csv", b"source,output\nS.,O.\n", {"fmt": "wide"}, 1, None, "annotators"),
    (
        "broken.jsonl",
        b'{"source": "S.", "output": "O."}\n{"source": "T.", \n',
        {},
        2,
        None,
        "not valid JSON",
    ),
    (
        "list.jsonl",
        b'{"source": "S.", "output": "O."}\n[1, 2]\n',
        {},
        2,
        None,
        "expected a JSON object",
    ),
    ("cr.csv", b"source,output\rS.,O.\r", {}, 1, None, "a carriage return alone"),
    (
        "huge.jsonl",
        b'{"source": "S.", "output": "O.", "annotator": "a", "meaning": 1e400}\n',
        {},
        1,
        None,
        "the number 1e400 is too large for a float",
    ),
    (
        "open.jsonl",
        b'{"source": "S.", "output": "O.}',
        {},
        1,
        None,
        "unterminated string starting at character 28",
    ),
    # Raters without a column of ratings: read as pairs, their ratings were dropped.
    (
        "score.csv",
        b"source,output,annotator,score\nS.,O.,anna,80\nS.,O.,ben,90\n",
        {},
        1,
        None,
        "no column of ratings beside it; the columns are: source, output, annotator, score; "
        "name the ratings' column with --map meaning=score",
    ),
    # A quote that opens a cell's text: lenient CSV parsing dropped it, unseen.
    (
        "quotes.tsv",
        b'source\toutput\nS.\tO.\n"Stop," she said.\tShe said stop.\n',
        {},
        3,
        None,
        "a tab expected after",
    ),
    # A file cut short inside a quoted cell: lenient parsing stored what was there.
    (
        "cut.csv",
        b'source,output,annotator,meaning\nS.,O.,a,40\nT.,P.,a,"6',
        {},
        3,
        None,
        "the file was cut short",
    ),  # fmt: skip
    ("obj.jsonl", b'{"source": {"a": 1}, "output": "O."}\n', {}, 1, "source", "expected text"),
    (
        "bool.jsonl",
        b'{"source": "S.", "output": "O.", "annotator": "a", "meaning": true}\n',
        {},
        1,
        "meaning",
        "not a number",
    ),
    (
        "newdim.csv",
        b"source,output,annotator,coh\nS.,O.,a,5\nT.,P.,a,500\n",
        {"mapping": ["coherence=coh"]},
        3,
        "coh",
        "outside",
    ),
]


@pytest.mark.parametrize(
    ("name", "data", "kwargs", "row", "column", "fragment"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_input_is_located_and_changes_nothing(
    study_path: Path,
    tmp_path: Path,
    name: str,
    data: bytes,
    kwargs: dict[str, Any],
    row: int | None,
    column: str | None,
    fragment: str,
) -> None:
    f = tmp_path / name
    f.write_bytes(data)
    err = refused_unchanged(study_path, lambda s: import_file(s, f, **kwargs))
    assert err.file == str(f)
    assert err.row == row, str(err)
    assert err.column == column, str(err)
    assert fragment.lower() in str(err).lower()
    assert str(f) in str(err)


def _big_file(path: Path, n: int, last: str) -> Path:
    def lines() -> Iterator[str]:
        yield "source,output,system,label\n"
        for i in range(n - 1):
            yield f"Source sentence number {i}.,Output {i}.,sys{i % 3},{i % 101}\n"
        yield last

    with path.open("w", encoding="utf-8") as fh:
        fh.writelines(lines())
    return path


def test_error_after_several_written_batches_rolls_everything_back(
    study_path: Path, tmp_path: Path
) -> None:
    # 45,000 rows: two batches are written to the journal before the bad last row.
    f = _big_file(tmp_path / "big.csv", 45_000, "Last.,Out.,sys,101\n")
    err = refused_unchanged(study_path, lambda s: import_file(s, f))
    assert (err.row, err.column) == (45_001, "label")


def test_cancel_rolls_back(study_path: Path, tmp_path: Path) -> None:
    f = _big_file(tmp_path / "big.csv", 30_000, "Last.,Out.,sys,5\n")
    token = CancelToken()

    def progress(done: int, total: int | None, message: str) -> None:
        token.cancel()

    bytes_before = study_path.read_bytes()
    study = open_study(study_path)
    snap = snapshot(study)
    with pytest.raises(Cancelled, match="nothing was imported"):
        import_file(study, f, progress=progress, cancel=token)
    assert snapshot(study) == snap
    study.close()
    assert study_path.read_bytes() == bytes_before


def test_missing_file_and_folder(new_study, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        import_file(new_study, tmp_path / "nope.csv")
    with pytest.raises(InputError, match="folder"):
        import_file(new_study, tmp_path)


def test_bad_options(new_study, tmp_path: Path) -> None:
    f = write(tmp_path / "p.csv", "source,output\nS.,O.\n")
    with pytest.raises(InputError, match="FIELD=COLUMN"):
        import_file(new_study, f, mapping=["source"])
    with pytest.raises(InputError, match="unknown format"):
        import_file(new_study, f, fmt="xlsx")
    with pytest.raises(InputError, match="dataset name is empty"):
        import_file(new_study, f, dataset="  ")
    with pytest.raises(InputError, match="unknown encoding"):
        import_file(new_study, f, encoding="no-such-codec")


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ('{"source": "S.\\ud800", "output": "O."}', None),
        (
            '{"source": "S.", "output": "O.", "annotator": "a", "meaning": 1' + "0" * 400 + "}",
            "meaning",
        ),
    ],
)
def test_json_values_no_file_can_hold(
    study_path: Path, tmp_path: Path, line: str, column: str | None
) -> None:
    f = write(tmp_path / "odd.jsonl", line + "\n")
    err = refused_unchanged(study_path, lambda s: import_file(s, f))
    assert (err.row, err.column) == (1, column)


def test_a_study_busy_with_another_writer_is_a_user_error(
    study_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    import meaningbench.db.engine
    from meaningbench.errors import UserError

    monkeypatch.setattr(meaningbench.db.engine, "BUSY_TIMEOUT_MS", 100)  # not the full ten seconds
    f = write(tmp_path / "p.csv", "source,output\nS.,O.\n")
    other = sqlite3.connect(study_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    study = open_study(study_path)
    try:
        with pytest.raises(UserError, match="busy"):
            import_file(study, f)
    finally:
        study.close()
        other.execute("ROLLBACK")
        other.close()
