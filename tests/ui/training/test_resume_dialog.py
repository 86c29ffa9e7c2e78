"""Cancel writes a checkpoint; the folder then offers Resume, which a fresh dialog (the app
reopened) continues from the checkpoint's step, with the curve so far already drawn."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from meaningbench.training.events import RunStarted, StepEnd
from meaningbench.training.status import training_state

from .conftest import use_tiny_model, wait_idle

# swap doubles the 72 training items: 18 steps an epoch at batch 8, 72 steps in 4 epochs.
SETTINGS = dict(epochs=4, batch=8, augment=("swap",), checkpoint_steps=4, eval_steps=6)


def test_cancel_then_resume_in_a_new_dialog(open_dialog, cue_path, tiny_encoder, qtbot) -> None:
    from meaningbench.db.study import open_study
    from meaningbench.training.register import registered_models

    first = open_dialog(cue_path)
    use_tiny_model(first, tiny_encoder, **SETTINGS)
    out = Path(first.form.out_dir.text())
    events: list = []
    first.train_event.connect(events.append)
    qtbot.mouseClick(first.start_button, Qt.MouseButton.LeftButton)
    handle = first.job
    qtbot.waitUntil(lambda: first.monitor.step >= 3, timeout=60_000)
    qtbot.mouseClick(first.cancel_button, Qt.MouseButton.LeftButton)
    assert not first.cancel_button.isEnabled()  # asked once; the run stops after its step
    wait_idle(qtbot, first)
    assert handle.outcome == "cancelled"
    total = next(e for e in events if isinstance(e, RunStarted)).total_steps
    done = max(e.step for e in events if isinstance(e, StepEnd))
    assert 3 <= done < total

    # The checkpoint holds the last finished step; the dialog says so and offers Resume.
    state = training_state(out)
    assert state is not None and state.resumable
    assert [(r.name, r.finished, r.step) for r in state.runs] == [("seed-0", False, done)]
    assert first.monitor.last_checkpoint_step == done
    assert f"checkpoint written at step {done}" in first.phase_label.text()
    assert f"seed-0: paused after {done} steps" in first.folder_notice.text()
    assert first.resume_button.isEnabled() and not first.start_button.isEnabled()
    assert not first.form.epochs.isEnabled() and first.form.epochs.value() == 4
    assert first.form.device.isEnabled()  # runtime settings may change on a resume
    assert list(first.curves.batch.xData) == list(range(1, done + 1))  # the live curve stays
    first.close()

    # A new dialog pointed at the folder: the checkpoint's curve is drawn before resuming.
    second = open_dialog(cue_path)
    second.form.out_dir.set_text(str(out))
    second.check_folder()
    checkpoint_steps = [p["step"] for p in state.runs[0].curve]
    assert checkpoint_steps[0] == 0
    assert list(second.curves.val.xData) == checkpoint_steps
    assert second.resume_button.isEnabled() and not second.start_button.isEnabled()
    assert second.form.batch.value() == 8 and second.form.augment["swap"].isChecked()
    resumed: list = []
    second.train_event.connect(resumed.append)
    qtbot.mouseClick(second.resume_button, Qt.MouseButton.LeftButton)
    handle = second.job
    wait_idle(qtbot, second)
    assert handle.outcome == "done", handle.failure and handle.failure.trace

    started = next(e for e in resumed if isinstance(e, RunStarted))
    assert (started.start_step, started.total_steps) == (done, total)
    steps = [e.step for e in resumed if isinstance(e, StepEnd)]
    assert steps == list(range(done + 1, total + 1))
    assert list(second.curves.batch.xData) == steps
    val_steps = list(second.curves.val.xData)
    assert val_steps[: len(checkpoint_steps)] == checkpoint_steps and val_steps[-1] == total
    assert second.progress.value() == second.progress.maximum() == total
    card = second.trained.card
    assert card["config"]["epochs"] == 4 and card["config"]["augment"] == ["swap"]
    assert [p["step"] for p in card["curve"]] == val_steps
    assert second.card.isVisible() and f"meaningbert@{second.trained.name}" in (
        second.card.registered.text()
    )
    study = open_study(cue_path)
    try:
        with study.session() as s:
            assert [m.name for m in registered_models(s)] == [second.trained.name]
    finally:
        study.close()
