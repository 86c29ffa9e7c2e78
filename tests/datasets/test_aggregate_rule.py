"""Aggregate labels follow one rule whether the kind was inferred or said with
`--ratings aggregate`: a few repeated pairs (published data has them) are kept with a
warning; a file where most labelled items repeat is refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from meaningbench.cli import main


def _ratings(study: Path) -> list[tuple[object, ...]]:
    con = sqlite3.connect(f"file:{study}?mode=ro", uri=True)
    try:
        return con.execute(
            "SELECT i.source, i.output, a.name, a.kind, r.value FROM rating r "
            "JOIN item i ON i.id = r.item_id JOIN annotator a ON a.id = r.annotator_id "
            "ORDER BY r.id"
        ).fetchall()
    finally:
        con.close()


def _both_ways(
    tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]
) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of the inferred import, then of `--ratings aggregate`."""
    out = []
    for n, extra in enumerate(([], ["--ratings", "aggregate"])):
        study = tmp_path / f"s{n}.mbstudy"
        code = main(["import", str(study), str(data), "--dataset", "csmd", "--json", *extra])
        done = capsys.readouterr()
        out.append((code, done.out, done.err))
    return out


def _csmd_like(path: Path, pairs: int, repeated: int) -> Path:
    lines = ["original\tsimplification\tlabel"]
    for i in range(pairs):
        lines.append(f"Source {i} is a sentence.\tOutput {i}.\t{(7 * i) % 100}")
    for i in range(repeated):  # the same pair again, with another label
        lines.append(f"Source {i} is a sentence.\tOutput {i}.\t{(7 * i + 50) % 100}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_few_repeated_pairs_give_the_same_study_either_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _csmd_like(tmp_path / "test.tsv", pairs=20, repeated=2)
    (code_i, out_i, _), (code_e, out_e, _) = _both_ways(tmp_path, data, capsys)
    assert (code_i, code_e) == (0, 0)
    inferred, explicit = json.loads(out_i), json.loads(out_e)
    assert inferred["rating_kind"] == explicit["rating_kind"] == "aggregate"
    assert inferred["conflicting_ratings"] == explicit["conflicting_ratings"] == 2
    assert inferred["warnings"] == explicit["warnings"]
    assert _ratings(tmp_path / "s0.mbstudy") == _ratings(tmp_path / "s1.mbstudy")
    assert len(_ratings(tmp_path / "s1.mbstudy")) == 22  # both labels of each repeat kept


def test_most_items_repeated_is_refused_either_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _csmd_like(tmp_path / "rows.tsv", pairs=4, repeated=3)
    (code_i, _, err_i), (code_e, _, err_e) = _both_ways(tmp_path, data, capsys)
    assert (code_i, code_e) == (2, 2)
    message = "aggregate labels: 3 of 4 labelled items have several rows for one dimension"
    assert message in err_i and message in err_e
    assert "--ratings anonymous" in err_e
    assert not (tmp_path / "s0.mbstudy").exists() and not (tmp_path / "s1.mbstudy").exists()


def test_csmd_train_imports_the_same_either_way(
    shared_datasets: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = shared_datasets / "csmd" / "train.tsv"
    (code_i, out_i, _), (code_e, out_e, err_e) = _both_ways(tmp_path, data, capsys)
    assert (code_i, code_e) == (0, 0), err_e
    inferred, explicit = json.loads(out_i), json.loads(out_e)
    assert inferred["conflicting_ratings"] == explicit["conflicting_ratings"] > 0
    assert _ratings(tmp_path / "s0.mbstudy") == _ratings(tmp_path / "s1.mbstudy")
