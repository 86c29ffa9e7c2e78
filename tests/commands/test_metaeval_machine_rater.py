"""`metaeval` on SimpDA 2022 judged by a tiny LLM judge stored as a machine rater: the judge's
column is named as that rater, in the text and in the JSON."""

from __future__ import annotations

import json

from meaningbench.cli import main
from tests.judged_study import RATER, judged_simpda_study


def test_metaeval_names_the_metric_that_is_also_a_machine_rater(tmp_path, capsys) -> None:
    study = judged_simpda_study(tmp_path, items=8)
    assert main(["score", str(study.path), "--metrics", "bleu"]) == 0
    capsys.readouterr()
    assert main(["metaeval", str(study.path), "--measures", "pearson", "--resamples", "50"]) == 0
    said = capsys.readouterr().out
    judge = next(line.split()[0] for line in said.splitlines() if "is also the machine" in line)
    assert judge.startswith("llm_judge[") and f"model={study.model}" in judge
    assert f"is also the machine rater {RATER} (judge --as-rater)" in said
    assert "its ratings are not part of the human scores" in said
    args = ["metaeval", str(study.path), "--measures", "pearson", "--resamples", "50", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["machine_raters"] == {judge: [RATER]}
