"""Cancel between steps, resume from the checkpoint, and end where an uninterrupted run ends."""

from __future__ import annotations

import json

import pytest
from safetensors.numpy import load_file

from meaningbench.errors import UserError
from meaningbench.runtime import Cancelled, CancelToken, JobContext
from meaningbench.training import RunStarted, StepEnd, train_model, training_state
from meaningbench.training.checkpoint import LAST

from .conftest import tiny_request

CANCEL_AFTER = 7


def _losses(events):
    return [(e.step, e.train_loss) for e in events if isinstance(e, StepEnd)]


def test_cancel_then_resume_matches_an_uninterrupted_run(cue_study, tiny_encoder, tmp_path) -> None:
    settings = dict(epochs=3, checkpoint_steps=4, augment=("swap",))
    whole_events: list = []
    whole = train_model(
        tiny_request(cue_study, tmp_path / "whole", tiny_encoder, **settings),
        on_event=whole_events.append,
    )
    total = next(e for e in whole_events if isinstance(e, RunStarted)).total_steps
    assert total > CANCEL_AFTER + 2

    # The dialog's cancel button sets the token; the run stops before the next step.
    token = CancelToken()
    first: list = []

    def cancel_at(event) -> None:
        first.append(event)
        if isinstance(event, StepEnd) and event.step == CANCEL_AFTER:
            token.cancel()

    out = tmp_path / "resumed"
    with pytest.raises(Cancelled):
        train_model(
            tiny_request(cue_study, out, tiny_encoder, **settings),
            JobContext(cancel=token),
            cancel_at,
        )
    assert max(step for step, _ in _losses(first)) == CANCEL_AFTER
    assert (out / "checkpoints" / "seed-0" / LAST).is_file()
    assert not (out / "model.safetensors").exists()
    # What a dialog reads to offer "resume": the position and the curve so far, no torch.
    paused = training_state(out)
    assert paused is not None and paused.resumable
    assert [(r.name, r.finished, r.step) for r in paused.runs] == [("seed-0", False, CANCEL_AFTER)]
    assert paused.runs[0].curve[0]["step"] == 0

    second: list = []
    resumed = train_model(
        tiny_request(cue_study, out, tiny_encoder, resume=True, **settings),
        on_event=second.append,
    )
    started = next(e for e in second if isinstance(e, RunStarted))
    assert started.start_step == CANCEL_AFTER
    assert [step for step, _ in _losses(second)] == list(range(CANCEL_AFTER + 1, total + 1))

    # Same seed, same machine: the interrupted run replays the uninterrupted one.
    combined = _losses(first) + _losses(second)
    assert [s for s, _ in combined] == [s for s, _ in _losses(whole_events)]
    assert [loss for _, loss in combined] == pytest.approx(
        [loss for _, loss in _losses(whole_events)], rel=1e-5
    )
    a = load_file(str(tmp_path / "whole" / "model.safetensors"))
    b = load_file(str(out / "model.safetensors"))
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == pytest.approx(b[key], abs=1e-5), key
    curves = [(r.card["curve"]) for r in (resumed, whole)]
    assert [p["step"] for p in curves[0]] == [p["step"] for p in curves[1]]
    assert [p["val_loss"] for p in curves[0]] == pytest.approx(
        [p["val_loss"] for p in curves[1]], rel=1e-5
    )
    assert resumed.selected_run == whole.selected_run
    done = training_state(out)
    assert done is not None and done.finished and done.runs[0].finished


def test_resume_refuses_other_settings_and_finished_runs_are_kept(
    cue_study, tiny_encoder, tmp_path
) -> None:
    out = tmp_path / "m"
    first = train_model(tiny_request(cue_study, out, tiny_encoder, epochs=1, max_steps=2))
    with pytest.raises(UserError, match="already holds a training"):
        train_model(tiny_request(cue_study, out, tiny_encoder, epochs=1, max_steps=2))
    with pytest.raises(UserError, match="other settings.*learning_rate"):
        train_model(
            tiny_request(
                cue_study, out, tiny_encoder, epochs=1, max_steps=2, learning_rate=1e-4, resume=True
            )
        )
    # Resuming a finished training trains nothing and rebuilds the same card and registration.
    events: list = []
    again = train_model(
        tiny_request(cue_study, out, tiny_encoder, epochs=1, max_steps=2, resume=True),
        on_event=events.append,
    )
    assert not [e for e in events if isinstance(e, StepEnd)]
    assert again.test == first.test
    card = json.loads((out / "model_card.json").read_text())
    assert card["selected_run"] == "seed-0"


def test_resume_refuses_changed_ratings(cue_study, tiny_encoder, tmp_path) -> None:
    from .conftest import add_rated_items, cue_rows

    out = tmp_path / "m"
    token = CancelToken()
    with pytest.raises(Cancelled):
        train_model(
            tiny_request(cue_study, out, tiny_encoder, epochs=1),
            JobContext(cancel=token),
            lambda e: token.cancel() if isinstance(e, StepEnd) else None,
        )
    with cue_study.session() as s:
        add_rated_items(s, cue_rows(2, seed=5))
    with pytest.raises(UserError, match="ratings changed"):
        train_model(tiny_request(cue_study, out, tiny_encoder, epochs=1, resume=True))
