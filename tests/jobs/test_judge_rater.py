"""`judge --as-rater` on a real study (SimpDA 2022's per-rater ratings, the copy in
tests/fixtures/datasets) with a tiny judge built from a config: the machine rater's
ratings are stored, never change any item's human score, and `raters` shows the judge beside
the humans."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from meaningbench.analysis.human import item_scores
from meaningbench.cli import main
from meaningbench.db.frames import ratings_frame
from meaningbench.db.study import open_study
from tests.judged_study import simpda_part
from tests.metrics.neural.judge_models import tiny_judge

ITEMS = 6


def _ratings(path: Path):
    study = open_study(path)
    try:
        with study.session() as s:
            return ratings_frame(s, dimension="meaning")
    finally:
        study.close()


def _human_scores(path: Path):
    return item_scores(_ratings(path)).sort_values("item_id").reset_index(drop=True)


def test_judge_as_rater_then_raters_shows_it_beside_the_humans(tmp_path, capsys):
    study_path = tmp_path / "simpda.mbstudy"
    assert main(["import", str(study_path), str(simpda_part(tmp_path, ITEMS))]) == 0
    before = _human_scores(study_path)
    # Characters are tokens: SimpDA's long sentences need a long context.
    model = tiny_judge(tmp_path / "judge", writes="0123456789", context=4096)
    capsys.readouterr()
    args = ["judge", str(study_path), "--model", model, "--max-tokens", "2", "--device", "cpu"]
    assert main([*args, "--as-rater", "tiny-judge"]) == 0
    said = capsys.readouterr().out
    assert (
        f"tiny-judge [machine]: {ITEMS} items rated by llm_judge[model={model},max_tokens=2]"
        in said
    )

    conn = sqlite3.connect(study_path)
    try:
        kind, meta = conn.execute(
            "SELECT kind, meta FROM annotator WHERE name = 'tiny-judge'"
        ).fetchone()
        stored = dict(
            conn.execute(
                "SELECT r.item_id, r.value FROM rating r JOIN annotator a ON a.id = r.annotator_id "
                "WHERE a.name = 'tiny-judge' AND r.state = 'current'"
            ).fetchall()
        )
        scores = dict(conn.execute("SELECT item_id, value FROM score").fetchall())
    finally:
        conn.close()
    assert kind == "machine" and json.loads(meta)["judge"].startswith("llm_judge[")
    assert stored == pytest.approx(scores)  # the study's meaning scale is 0–100
    after = _human_scores(study_path)
    # The human scores are those of the humans alone, to the bit.
    assert after.equals(before)

    assert main([*args, "--as-rater", "tiny-judge"]) == 0  # a rerun supersedes
    conn = sqlite3.connect(study_path)
    try:
        states = conn.execute(
            "SELECT r.state, COUNT(*) FROM rating r JOIN annotator a ON a.id = r.annotator_id "
            "WHERE a.name = 'tiny-judge' GROUP BY r.state ORDER BY r.state"
        ).fetchall()
    finally:
        conn.close()
    assert states == [("current", ITEMS), ("superseded", ITEMS)]

    capsys.readouterr()
    assert main(["raters", str(study_path), "--json"]) == 0
    checks = {c["rater"]: c for c in json.loads(capsys.readouterr().out)}
    machine = checks.pop("tiny-judge")
    assert machine["machine"] is True and machine["agreement_n"] == ITEMS
    assert checks and not any(c["machine"] for c in checks.values())
    human_mean = before.set_index("item_id")["score"]
    expected_r = np.corrcoef([stored[i] for i in human_mean.index], human_mean.to_numpy())[0, 1]
    assert machine["agreement_r"] == pytest.approx(expected_r)
    assert main(["raters", str(study_path)]) == 0
    text = capsys.readouterr().out
    assert "machine 1" in text and "tiny-judge [machine]" in text

    # agreement: the raters' alpha unchanged by the judge, and alpha with it beside it.
    import krippendorff

    frame = _ratings(study_path)
    humans = frame[frame["annotator_kind"] == "named"]
    with_judge = frame[frame["annotator_kind"].isin(["named", "machine"])]

    def oracle(part) -> float:
        matrix = part.pivot_table(index="annotator", columns="item_id", values="value")
        return float(krippendorff.alpha(matrix.to_numpy(), level_of_measurement="interval"))

    assert main(["agreement", str(study_path), "--boot", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["alpha"] == pytest.approx(oracle(humans))
    machine_alpha = result["machine"]["tiny-judge"]
    assert machine_alpha["alpha_without"] == pytest.approx(oracle(humans))
    assert machine_alpha["alpha_with"] == pytest.approx(oracle(with_judge))


def test_a_human_raters_name_is_refused(tmp_path, capsys):
    study_path = tmp_path / "simpda.mbstudy"
    assert main(["import", str(study_path), str(simpda_part(tmp_path, ITEMS))]) == 0
    conn = sqlite3.connect(study_path)
    try:
        (human,) = conn.execute(
            "SELECT name FROM annotator WHERE kind = 'named' LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    assert main(["judge", str(study_path), "--as-rater", human]) == 2
    assert "a judge's ratings need a name of their own" in capsys.readouterr().err
