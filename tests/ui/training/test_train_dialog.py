"""The dialog trains a tiny model on a small study: live curves, progress, model card, and
the model registered in the study where the battery offers it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import Qt
from scipy import stats

from meaningbench.queries.training_progress import SMOOTHING
from meaningbench.training.events import TRAIN_EVENT, Evaluated, RunStarted, StepEnd

from .conftest import use_tiny_model, wait_idle


def test_training_draws_the_curves_and_registers_the_model(
    open_dialog, cue_path, tiny_encoder, qtbot
) -> None:
    from meaningbench.db.study import open_study
    from meaningbench.jobs.metric_listing import list_metrics
    from meaningbench.training.register import registered_models

    dialog = open_dialog(cue_path)
    use_tiny_model(dialog, tiny_encoder, eval_steps=3)
    dialog.form.name.setText("cue-model")
    out = dialog.form.out_dir.text()
    assert dialog.start_button.isEnabled() and not dialog.resume_button.isEnabled()
    events: list = []
    dialog.train_event.connect(events.append)
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    handle = dialog.job
    assert handle is not None and dialog.cancel_button.isEnabled()
    assert not dialog.form.isEnabled() and not dialog.start_button.isEnabled()
    wait_idle(qtbot, dialog)
    assert handle.outcome == "done", handle.failure and handle.failure.trace
    assert dialog.trained is not None and dialog.error_notice.isHidden()

    # The curves hold exactly what the training reported.
    total = next(e for e in events if isinstance(e, RunStarted)).total_steps
    steps = [e for e in events if isinstance(e, StepEnd)]
    evals = [e for e in events if isinstance(e, Evaluated)]
    curves = dialog.curves
    assert list(curves.batch.xData) == [e.step for e in steps] == list(range(1, total + 1))
    assert list(curves.batch.yData) == pytest.approx([e.train_loss for e in steps])
    ema, expected = 0.0, []
    for t, e in enumerate(steps, start=1):
        ema = SMOOTHING * ema + (1 - SMOOTHING) * e.train_loss
        expected.append(ema / (1 - SMOOTHING**t))
    assert list(curves.smooth.yData) == pytest.approx(expected)
    assert list(curves.val.xData) == [e.step for e in evals]
    assert evals[0].step == 0 and {3, 6, total} <= {e.step for e in evals}
    val = np.asarray(curves.val.yData)
    assert val[1:].min() < 0.7 * val[0]  # the tiny model learns the cue
    best = int(np.argmin(val))
    assert list(curves.best.data["x"]) == [evals[best].step]
    assert curves.redraws <= dialog.events_seen
    assert dialog.progress.value() == dialog.progress.maximum() == total
    assert "Finished" in dialog.phase_label.text()

    # The model card's figures, as the panel shows them; the test Pearson recomputed.
    card = dialog.trained.card
    shown = {row.label: row.value for row in dialog.card.rows}
    assert dialog.card.isVisible()
    assert shown["Pearson r"] == f"{card['test']['pearson']:.3f}"
    assert shown["RMSE"] == f"{card['test']['rmse']:.1f}"
    assert shown["Identical ≥ 95"] == f"{card['sanity']['identical']['95']:.0%}"
    saved = json.loads(
        (dialog.trained.out_dir / "checkpoints" / "seed-0" / "result.json").read_text()
    )
    preds = saved["predictions"]
    assert card["test"]["pearson"] == pytest.approx(
        stats.pearsonr(preds["value"], preds["human"]).statistic, abs=1e-9
    )

    # Registered in the study, and offered by the battery.
    assert "meaningbert@cue-model" in dialog.card.registered.text()
    study = open_study(cue_path)
    try:
        with study.session() as s:
            models = [(m.name, m.metric, m.path) for m in registered_models(s)]
    finally:
        study.close()
    assert models == [("cue-model", "meaningbert", str(dialog.trained.out_dir.resolve()))]
    assert str(dialog.trained.out_dir) == out
    offered = {m.name: m for m in list_metrics(cue_path)}
    assert offered["meaningbert@cue-model"].available is True

    # The folder now holds a finished model: a new training needs another folder.
    assert not dialog.start_button.isEnabled() and not dialog.resume_button.isEnabled()
    assert "finished" in dialog.start_button.toolTip()
    dialog.form.out_dir.set_text(out + "-2")
    dialog.check_folder()
    assert dialog.start_button.isEnabled() and dialog.form.epochs.isEnabled()
    assert dialog.card.isHidden() and curves.batch.xData is None  # cleared


def test_redraws_are_throttled_whatever_the_rate_of_events(open_dialog, cue_path) -> None:
    dialog = open_dialog(cue_path)
    dialog._on_message(TRAIN_EVENT, RunStarted("seed-0", 0, 1, 2000, 0, 100, 1600, 160))
    for n in range(1, 1001):
        step = StepEnd("seed-0", n, 2000, n // 100 + 1, 500.0 / n, 1e-4, n * 0.01)
        dialog._on_message(TRAIN_EVENT, step)
    before = dialog.curves.redraws
    assert dialog.curves.refresh(dialog.monitor) is True
    assert dialog.curves.refresh(dialog.monitor) is False  # nothing new: no redraw
    assert dialog.curves.redraws == before + 1 and dialog.events_seen == 1001
    assert len(dialog.curves.batch.xData) == 1000
