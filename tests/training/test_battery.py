"""End to end: train a tiny model, register it, and score the study with `meaningbert@NAME`."""

from __future__ import annotations

import json

import pytest

from meaningbench.analysis.score_columns import scores_frame
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.runtime import JobContext
from meaningbench.training import train_model

from .conftest import tiny_request


def test_the_battery_scores_a_trained_model(cue_study, tiny_encoder, tmp_path) -> None:
    out = tmp_path / "battery-model"
    result = train_model(tiny_request(cue_study, out, tiny_encoder, epochs=1, max_steps=4))
    summaries = score_study(
        ScoreRequest(
            study_path=cue_study.path,
            metrics=[f"meaningbert@{result.name}"],
            options={"device": "cpu", "workers": 1},
        ),
        JobContext(),
    )
    assert [s.status for s in summaries] == ["done"], summaries
    with cue_study.session() as s:
        scores = scores_frame(s)
    assert len(scores) == 90 and set(scores["metric"]) == {"meaningbert"}
    by_item = dict(zip(scores["item_id"], scores["value"], strict=True))
    # The battery's values are the model's own test predictions: the same folder, read alike.
    saved = json.loads((out / "checkpoints" / "seed-0" / "result.json").read_text())["predictions"]
    for item_id, value in zip(saved["item_id"], saved["value"], strict=True):
        assert by_item[item_id] == pytest.approx(value, abs=1e-3)
