"""Practice with gold: feedback against the expected range, results kept per rater, and
nothing of it in `correlate` or `export` — even for practice pairs equal to study items."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from meaningbench.annotation.practice import (
    PracticeSession,
    add_practice,
    practice_results,
    read_practice_file,
)
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.cli import main
from meaningbench.db.study import create_study, open_study
from meaningbench.errors import UserError
from tests.annotation.factories import add_items

CSV = (
    "source,output,low,high,explanation\n"
    'The cat sat on the mat.,The cat sat.,60,90,"Drops only where it sat."\n'
    "The storm closed the bridge.,The bridge opened.,0,20,The meaning is reversed.\n"
)


def test_a_practice_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "practice.csv"
    path.write_text(CSV, encoding="utf-8")
    rows = read_practice_file(path)
    assert rows[1] == (
        "The storm closed the bridge.",
        "The bridge opened.",
        0.0,
        20.0,
        "The meaning is reversed.",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("source,output,low\na,b,1\n", "missing column\\(s\\) high"),
        ("source,output,low,high\na,b,x,9\n", "row 2, column 'low': 'x' is not a number"),
        ("source,output,low,high\na,b,1,9\na,b,70,20\n", "row 3, columns 'low'/'high': 70–20"),
        ("source,output,low,high\na,,1,9\n", "row 2, column 'output': empty"),
        ('source,output,low,high\na,b,1,9\n"Stop," she said,b,1,9\n', "row 3: malformed CSV"),
    ],
)
def test_a_bad_practice_file_names_row_and_column(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=f"p.csv.*{message}"):
        read_practice_file(path)


def test_feedback_and_results_per_rater(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text(CSV, encoding="utf-8")
    st = create_study(tmp_path / "s.mbstudy")
    try:
        add_practice(st, read_practice_file(tmp_path / "p.csv"))
        ann = PracticeSession(st, "ann")
        first, second = ann.pending()
        fb = ann.answer(first, 75)
        assert fb.passed and "within the expected 60–90" in fb.text() and "Drops only" in fb.text()
        fb = ann.answer(second, 45)
        assert not fb.passed and "above the expected 0–20" in fb.text()
        assert ann.pending() == []
        assert [p.id for p in PracticeSession(st, "bo").pending()] == [first.id, second.id]
        [result] = practice_results(st)
        assert (result.rater, result.answered, result.passed) == ("ann", 2, 1)
    finally:
        st.close()


def test_practice_answers_never_reach_correlate_or_export(tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.mbstudy"
    st = create_study(path)
    rng = random.Random(4)
    try:
        add_items(st, 12, 2)
        with st.session() as s:
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 9, False
            save_settings(s, cfg)
        sess = AnnotationSession(st, "ann")
        pairs = []
        while (item := sess.next_item()) is not None:
            pairs.append((item.source, item.output))
            sess.submit(item.item_id, {"meaning": float(rng.randint(0, 100))})
    finally:
        st.close()
    assert main(["score", str(path), "--metrics", "bleu,chrf", "--workers", "1"]) == 0
    capsys.readouterr()

    def results() -> tuple[dict, str]:
        assert main(["correlate", str(path), "--boot", "0", "--json"]) == 0
        table = json.loads(capsys.readouterr().out)
        out = tmp_path / "items.csv"
        assert main(["export", str(path), str(out), "--ratings"]) == 0
        capsys.readouterr()
        return table["metrics"], out.read_text(encoding="utf-8")

    before = results()
    assert before[0] and all(m["n"] == len(pairs) == 24 for m in before[0].values())
    # Practice pairs identical to study items, answered at the far ends by the study's rater
    # and by a new one: were they ratings, every correlation and the export would change.
    st = open_study(path)
    try:
        add_practice(st, [(a, b, 0.0, 10.0, "") for a, b in pairs])
        for rater, value in (("ann", 100.0), ("newcomer", 0.0)):
            practice = PracticeSession(st, rater)
            for p in practice.pending():
                practice.answer(p, value)
        assert sum(r.answered for r in practice_results(st)) == 2 * len(pairs)
    finally:
        st.close()
    after = results()
    assert after == before
    assert "newcomer" not in after[1]
