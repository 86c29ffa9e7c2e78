"""Training through its op, on a real rated study with a tiny encoder built from a config: a
registered model is a new row of the study's models and the result names the runs' lists; a
model kept out of the study changes nothing there; a cancelled or refused training writes
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.train import TRAIN_EVENT, train_job
from meaningbench.runtime import Cancelled, JobContext
from meaningbench.runtime.changes import StudyChanges
from meaningbench.training.events import StepEnd
from tests.ops.study_rows import every_row, rows
from tests.training.conftest import cue_study, tiny_encoder, tiny_request  # noqa: F401

QUICK = dict(epochs=1, max_steps=3, sanity_n=5)
MODELS = "SELECT name, metric, path FROM registered_model ORDER BY id"


def test_a_registered_model_is_a_row_of_the_study(
    cue_study: Study,  # noqa: F811
    tiny_encoder: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    messages: list[tuple[str, object]] = []
    events: list[object] = []
    ctx = JobContext(on_message=lambda kind, payload: messages.append((kind, payload)))
    request = tiny_request(cue_study, tmp_path / "model", tiny_encoder, name="cue", **QUICK)
    wrote = train_job(request, ctx, events.append)
    assert wrote.changes == StudyChanges(runs=True)
    result = wrote.value
    assert result.registered and result.name == "cue"
    assert [(name, path) for name, _, path in rows(cue_study.path, MODELS)] == [
        ("cue", str(result.model_dir))
    ]
    # The loss events went both to the job's messages and to the terminal's display.
    assert events and messages == [(TRAIN_EVENT, e) for e in events]


def test_a_model_kept_out_of_the_study_changes_nothing_there(
    cue_study: Study,  # noqa: F811
    tiny_encoder: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    before = every_row(cue_study.path)
    out = tmp_path / "model"
    request = tiny_request(cue_study, out, tiny_encoder, register=False, **QUICK)
    wrote = train_job(request, JobContext())
    assert not wrote.value.registered and not wrote.changes
    assert (out / "model.safetensors").is_file()
    assert every_row(cue_study.path) == before


def test_a_cancelled_or_refused_training_writes_nothing(
    cue_study: Study,  # noqa: F811
    tiny_encoder: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    before = every_row(cue_study.path)
    ctx = JobContext()

    def cancel_at_first_step(event: object) -> None:
        if isinstance(event, StepEnd):
            ctx.cancel.cancel()

    request = tiny_request(cue_study, tmp_path / "cancelled", tiny_encoder, **QUICK)
    with pytest.raises(Cancelled):
        train_job(request, ctx, cancel_at_first_step)
    assert not (tmp_path / "cancelled" / "model.safetensors").exists()
    with pytest.raises(UserError, match="cannot name a model"):
        train_job(tiny_request(cue_study, tmp_path / "bad", tiny_encoder, name="a@b"), JobContext())
    assert every_row(cue_study.path) == before
