"""`meaningbench practice STUDY --add CSV` adds the file's practice pairs through the op
(ops.practice.add_practice_items), after those already there."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.db.study import create_study


def _rows(study: Path) -> list[tuple[int, str, float, float]]:
    con = sqlite3.connect(f"file:{study}?mode=ro", uri=True)
    try:
        return con.execute(
            "SELECT position, source, low, high FROM practice_item ORDER BY position"
        ).fetchall()
    finally:
        con.close()


def test_practice_add_appends_the_pairs_and_says_how_many(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "s.mbstudy"
    create_study(study).close()
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(
        "source,output,low,high\nA cat.,A cat.,90,100\nA dog.,A cat.,0,20\n", encoding="utf-8"
    )
    second.write_text("source,output,low,high,explanation\nB.,B.,80,100,same\n", encoding="utf-8")
    assert main(["practice", str(study), "--add", str(first)]) == 0
    assert capsys.readouterr().out == f"added 2 practice items from {first}\n"
    assert main(["practice", str(study), "--add", str(second), "--json"]) == 0
    assert '"added": 1' in capsys.readouterr().out
    assert _rows(study) == [
        (1, "A cat.", 90.0, 100.0),
        (2, "A dog.", 0.0, 20.0),
        (3, "B.", 80.0, 100.0),
    ]
