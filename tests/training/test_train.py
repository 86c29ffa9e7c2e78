"""A tiny encoder trained on a small study learns, is saved as the battery reads it, and is
registered in the study with a model card whose figures the saved model reproduces."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from meaningbench.db.frames import items_frame, ratings_frame
from meaningbench.db.models import RegisteredModel
from meaningbench.errors import UserError
from meaningbench.runtime import JobContext, Progress
from meaningbench.training import (
    TRAIN_EVENT,
    EpochEnd,
    Evaluated,
    RunStarted,
    StepEnd,
    event_to_dict,
    train_model,
    training_state,
)

from .conftest import tiny_request


def _score_saved(model_dir, sources, outputs):
    """The saved folder scored the way the meaningbert metric does (transformers as oracle)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    enc = tokenizer(
        list(sources), list(outputs), truncation="longest_first", max_length=512,
        padding=True, return_tensors="pt",
    )  # fmt: skip
    with torch.inference_mode():
        return model(**enc).logits.reshape(-1).numpy().astype(np.float64)


def _human_means(study, item_ids):
    with study.session() as s:
        ratings = ratings_frame(s, dimension="meaning")
    means = ratings.groupby("item_id")["value"].mean()
    return means.loc[list(item_ids)].to_numpy()


def test_a_tiny_model_learns_and_is_registered(cue_study, tiny_encoder, tmp_path) -> None:
    events = []
    messages: list[tuple[str, object]] = []
    progress: list[Progress] = []
    out = tmp_path / "cue-model"
    # The training is a job like any other: its context gets the progress and the events.
    ctx = JobContext(report=progress.append, on_message=lambda k, p: messages.append((k, p)))
    result = train_model(tiny_request(cue_study, out, tiny_encoder), ctx, events.append)
    assert messages == [(TRAIN_EVENT, e) for e in events]
    steps_total = sum(e.total_steps for e in events if isinstance(e, RunStarted))
    assert progress and progress[-1].total == steps_total and progress[-1].done == steps_total

    evaluations = [e for e in events if isinstance(e, Evaluated)]
    assert evaluations[0].step == 0  # the untrained model is the curve's first point
    assert min(e.val_loss for e in evaluations[1:]) < 0.7 * evaluations[0].val_loss

    started = next(e for e in events if isinstance(e, RunStarted))
    steps = [e for e in events if isinstance(e, StepEnd)]
    assert [e.step for e in steps] == list(range(1, started.total_steps + 1))
    assert len([e for e in events if isinstance(e, EpochEnd)]) == 8
    lrs = [e.learning_rate for e in steps]
    peak = int(np.argmax(lrs))
    assert 0 < peak < len(lrs) - 1 and lrs[-1] < 0.1 * lrs[peak]  # warm-up, then linear decay
    json.dumps([event_to_dict(e) for e in events])  # every event is JSON-ready

    # The model folder is what the battery loads; it reproduces the card's test figures.
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "model_card.json",
        "README.md",
    ):
        assert (out / name).is_file(), name
    assert not list((out / "checkpoints").glob("*/last.pt"))
    card = json.loads((out / "model_card.json").read_text())
    heldout = set(card["split"]["heldout_source_groups"])
    with cue_study.session() as s:
        items = items_frame(s)
    test_items = items[items["source_group"].isin(heldout)]
    assert len(test_items) == card["test"]["n"] > 0
    values = np.clip(_score_saved(out, test_items["source"], test_items["output"]), 0, 100)
    human = _human_means(cue_study, test_items["item_id"])
    assert card["test"]["pearson"] == pytest.approx(
        stats.pearsonr(values, human).statistic, abs=1e-4
    )
    assert card["test"]["rmse"] == pytest.approx(np.sqrt(np.mean((values - human) ** 2)), abs=1e-3)
    assert card["test"]["pearson"] > 0.5  # the cue was learned, on sources never seen
    assert card["data"]["n_items"] == 90 and card["data"]["hash"]
    assert card["split"]["parts"]["test"]["groups"] == len(heldout)
    assert set(card["sanity"]["identical"]) == {"95", "96", "97", "98", "99", "100"}
    assert card["sanity"]["n"] == len(set(test_items["source"]))
    assert card["versions"]["torch"] and card["curve"][0]["step"] == 0
    assert "## Test figures" in (out / "README.md").read_text()

    with cue_study.session() as s:
        row = s.query(RegisteredModel).filter_by(name="cue-model").one()
        assert row.metric == "meaningbert"
        assert row.path == str(out.resolve())
        assert row.card["test"]["pearson"] == pytest.approx(card["test"]["pearson"])
    assert result.name == "cue-model" and result.registered


def test_folds_and_seeds_pool_out_of_fold_predictions(cue_study, tiny_encoder, tmp_path) -> None:
    out = tmp_path / "cv"
    request = tiny_request(
        cue_study, out, tiny_encoder, folds=3, seeds=(0, 1), epochs=1, max_steps=3, sanity_n=5
    )
    result = train_model(request)
    names = sorted(r.name for r in result.runs)
    assert names == sorted(f"fold-{f}-seed-{s}" for f in (1, 2, 3) for s in (0, 1))
    assert result.selected_run == min(result.runs, key=lambda r: r.best_val_loss).name
    state = training_state(out)
    assert state is not None and state.finished
    assert [r.name for r in state.runs] == [r.name for r in result.runs]  # training order
    # Oracle: every item is a test item in exactly one fold; pool per seed, scipy per seed.
    per_seed = []
    for seed in (0, 1):
        values, human, ids = [], [], []
        for fold in (1, 2, 3):
            raw = json.loads(
                (out / "checkpoints" / f"fold-{fold}-seed-{seed}" / "result.json").read_text()
            )
            values += raw["predictions"]["value"]
            human += raw["predictions"]["human"]
            ids += raw["predictions"]["item_id"]
        assert sorted(ids) == sorted(set(ids)) and len(ids) == 90
        per_seed.append(stats.pearsonr(values, human).statistic)
    assert result.test["pearson"] == pytest.approx(np.mean(per_seed), abs=1e-6)
    assert result.test["pearson_sd"] == pytest.approx(np.std(per_seed, ddof=1), abs=1e-6)


def test_refusals_before_any_training(cue_study, tiny_encoder, tmp_path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not an empty folder"):
        train_model(tiny_request(cue_study, busy, tiny_encoder))
    with pytest.raises(UserError, match="no training to resume"):
        train_model(tiny_request(cue_study, tmp_path / "none", tiny_encoder, resume=True))
    with cue_study.session() as s:
        s.add(RegisteredModel(name="taken", metric="meaningbert", path=str(tmp_path / "elsewhere")))
    with pytest.raises(UserError, match="already has a model named 'taken'"):
        train_model(tiny_request(cue_study, tmp_path / "new", tiny_encoder, name="taken"))
    with pytest.raises(UserError, match="cannot name a model"):
        train_model(tiny_request(cue_study, tmp_path / "new", tiny_encoder, name="bad name@x"))
    with pytest.raises(UserError, match="no such model folder"):
        train_model(tiny_request(cue_study, tmp_path / "new", "./no/such/encoder"))
    with pytest.raises(UserError, match="unknown augmentation"):
        train_model(tiny_request(cue_study, tmp_path / "new", tiny_encoder, augment=("flip",)))
    assert not (tmp_path / "new").exists()
