"""`meaningbench disagreements` on a real study file: the list in words and in JSON,
settling from the command line, the decisions read by `correlate`, `metaeval`,
`export` and `dataset` only with `--labels resolved`, and bad input refused with a message that says why."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from meaningbench.cli import main
from meaningbench.db.study import Study
from tests.analysis.studybuild import SOURCES, add_items, add_ratings, add_scores
from tests.ops.study_rows import every_row

# Three raters on 8 items; items 3 and 6 (0-based) split them widely.
RATERS = {
    "ann": [50, 60, 70, 10, 40, 55, 95, 30],
    "bob": [55, 62, 68, 90, 45, 50, 20, 35],
    "cat": [52, 58, 71, 50, 42, 53, 60, 33],
}


def _study(study: Study) -> list[int]:
    ids = add_items(study, [(s, s.split(" ", 1)[1], f"sys{k % 2}") for k, s in enumerate(SOURCES)])
    for rater, values in RATERS.items():
        add_ratings(study, rater, dict(zip(ids, map(float, values), strict=True)))
    add_ratings(study, "judge", {i: 50.0 for i in ids}, kind="machine")
    add_scores(study, "overlap", {i: float(k) for k, i in enumerate(ids)})
    return ids


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def test_the_list_in_words_names_each_raters_rating(
    new_study: Study, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _study(new_study)
    assert main(["disagreements", str(new_study.path), "--threshold", "20"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("meaning: 2 items whose raters differ by more than 20 (the threshold")
    first = out.index(f"item {ids[3]}: gap 80, system sys1")
    assert first < out.index(f"item {ids[6]}: gap 75, system sys0")
    assert "  ann  10\n  cat  50\n  bob  90\n" in out
    assert "judge" not in out  # a machine rater is no rater here
    assert "--resolve ITEM" in out


def test_settled_from_the_command_line_and_read_with_labels_resolved(
    new_study: Study, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ids = _study(new_study)
    study = str(new_study.path)
    code, before = _json(capsys, "correlate", study, "--boot", "0", "--json")
    assert code == 0
    assert main(["disagreements", study, "--resolve", str(ids[3]), "--exclude"]) == 0
    assert "excluded" in capsys.readouterr().out
    code, settled = _json(
        capsys, "disagreements", study, "--resolve", str(ids[6]), "--score", "60", "--json"
    )
    assert code == 0 and settled == {
        "item_id": ids[6],
        "dimension": "meaning",
        "decision": "score",
        "score": 60.0,
        "raters_mean": 175 / 3,
        "n_raters": 3,
        "note": None,
        "label_set": "resolved",
    }
    code, listed = _json(capsys, "disagreements", study, "--threshold", "20", "--json")
    assert [i["resolution"]["decision"] for i in listed["items"]] == ["exclude", "score"]

    # Without --labels the decisions are not read; with it, the excluded item is gone.
    assert _json(capsys, "correlate", study, "--boot", "0", "--json") == (0, before)
    code, after = _json(capsys, "correlate", study, "--boot", "0", "--labels", "resolved", "--json")
    assert code == 0 and after["n"] == before["n"] - 1 == 7
    assert after["label_sets"] == ["resolved"]

    code, meta = _json(
        capsys, "metaeval", study, "--resamples", "20", "--labels", "resolved", "--json"
    )
    assert code == 0 and (meta["n_outputs"], meta["n_left_out"]) == (7, 1)

    # The items table: no label column for decisions not read; read, they are the labels.
    plain, settled_csv = tmp_path / "plain.csv", tmp_path / "settled.csv"
    assert main(["export", study, str(plain)]) == 0
    assert main(["export", study, str(settled_csv), "--labels", "resolved"]) == 0
    capsys.readouterr()
    assert "meaning_label" not in plain.read_text().splitlines()[0]
    with settled_csv.open(newline="") as fh:
        by_item = {int(r["item_id"]): r for r in csv.DictReader(fh)}
    assert by_item[ids[6]]["meaning_human"] == by_item[ids[6]]["meaning_label"] == "60.0"
    assert by_item[ids[3]]["meaning_human"] == "" and by_item[ids[0]]["meaning_label"] == ""

    out = tmp_path / "published"
    assert main(["dataset", study, str(out), "--labels", "resolved", "--boot", "10"]) == 0
    labels = pq.read_table(out / "labels.parquet").to_pylist()
    assert [(r["item_id"], r["decision"], r["value"]) for r in labels] == [
        (ids[3], "exclude", 50.0),
        (ids[6], "score", 60.0),
    ]
    assert "decision: the lead's settling" in (out / "README.md").read_text()


def test_bad_input_is_refused_with_why(
    new_study: Study, capsys: pytest.CaptureFixture[str]
) -> None:
    study = str(new_study.path)
    (lone,) = add_items(new_study, [(SOURCES[0], "The cat sat.", "s")])
    add_ratings(new_study, "ann", {lone: 10.0})
    add_ratings(new_study, "judge", {lone: 90.0}, kind="machine")
    before = every_row(new_study.path)
    cases = [
        (["disagreements", study], "no item has meaning ratings from two human raters"),
        (["disagreements", study, "--resolve", str(lone)], "say how to settle"),
        (["disagreements", study, "--exclude"], "add --resolve ITEM"),
        (["disagreements", study, "--resolve", str(lone), "--keep-all"], "1 human rater"),
        (["disagreements", study, "--threshold", "-3"], "a threshold is a gap of 0 or more"),
    ]
    for argv, message in cases:
        capsys.readouterr()
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv
    assert every_row(new_study.path) == before
