"""The dialog's view of a training, fed with events as `train_model` emits them."""

from __future__ import annotations

import math

import pytest

from meaningbench.queries.training_progress import SMOOTHING, TrainingMonitor
from meaningbench.training.events import Checkpointed, Evaluated, Phase, RunStarted, StepEnd


def started(run: str = "seed-0", *, index: int = 0, n_runs: int = 1, total: int = 10,
            start: int = 0, spe: int = 5) -> RunStarted:  # fmt: skip
    return RunStarted(run, index, n_runs, total, start, spe, n_train=80, n_val=8)


def step(n: int, loss: float, elapsed: float, run: str = "seed-0", total: int = 10) -> StepEnd:
    return StepEnd(run, n, total, epoch=(n - 1) // 5 + 1, train_loss=loss,
                   learning_rate=1e-4, elapsed_s=elapsed)  # fmt: skip


def test_smoothing_is_a_debiased_moving_average() -> None:
    m = TrainingMonitor()
    m.feed(started())
    for n, loss in enumerate([100.0, 50.0, 80.0], start=1):
        m.feed(step(n, loss, float(n)))
    curves = m.runs["seed-0"]
    # By hand with β = 0.9: ema 10, 14, 20.6; debiased by 1 − β^t = 0.1, 0.19, 0.271.
    assert SMOOTHING == 0.9
    assert curves.smooth_loss == pytest.approx([100.0, 14 / 0.19, 20.6 / 0.271])
    assert curves.steps == [1, 2, 3] and curves.batch_loss == [100.0, 50.0, 80.0]


def test_time_left_counts_the_steps_of_the_runs_still_to_come() -> None:
    m = TrainingMonitor()
    m.feed(Phase("reading the study's ratings"))
    assert m.seconds_left() is None and m.phase.startswith("reading")
    m.feed(started(n_runs=2, total=10))
    m.feed(step(1, 10.0, 5.0))
    assert m.seconds_per_step() is None  # one step says nothing about speed yet
    m.feed(step(3, 10.0, 9.0))
    assert m.seconds_per_step() == pytest.approx(2.0)
    assert (m.overall_done, m.overall_total) == (3, 20)
    assert m.seconds_left() == pytest.approx(17 * 2.0)
    assert m.phase == ""  # a step ends the phase message
    # The second run: the first one's steps count as done, speed is measured afresh.
    m.feed(started("fold-2", index=1, n_runs=2, total=10))
    assert m.seconds_per_step() is None
    m.feed(step(1, 10.0, 1.0, run="fold-2"))
    m.feed(step(2, 10.0, 2.0, run="fold-2"))
    assert (m.overall_done, m.overall_total) == (12, 20)
    assert m.seconds_left() == pytest.approx(8 * 1.0)


def test_a_resume_counts_the_runs_it_finished_before_as_done() -> None:
    m = TrainingMonitor()
    m.feed(started("seed-1", index=1, n_runs=3, total=10, start=4))
    assert (m.step, m.epoch) == (4, 1)
    assert (m.overall_done, m.overall_total) == (14, 30)


def test_a_checkpoint_curve_is_drawn_and_not_repeated_by_later_events() -> None:
    m = TrainingMonitor()
    curve = [
        {"step": 0, "epoch": 0.0, "train_loss": None, "val_loss": 900.0},
        {"step": 5, "epoch": 1.0, "train_loss": 700.0, "val_loss": 400.0},
        {"step": 10, "epoch": 2.0, "train_loss": 300.0, "val_loss": 450.0},
    ]
    m.seed_from_checkpoint("seed-0", curve)
    c = m.runs["seed-0"]
    assert c.val_steps == [0, 5, 10] and c.val_loss == [900.0, 400.0, 450.0]
    assert (c.best_step, c.best_val_loss) == (5, 400.0)  # the lowest, not the last
    assert c.mean_steps == [5, 10] and c.mean_loss == [700.0, 300.0]
    version = m.version
    m.feed(Evaluated("seed-0", 10, 2.0, 450.0, 300.0, best=False, elapsed_s=3.0))
    assert c.val_steps == [0, 5, 10]  # the same evaluation again: not a new point
    m.feed(Evaluated("seed-0", 15, 3.0, math.nan, 250.0, best=False, elapsed_s=4.0))
    assert c.val_steps == [0, 5, 10] and c.mean_steps == [5, 10, 15]
    m.feed(Evaluated("seed-0", 20, 4.0, 350.0, 200.0, best=True, elapsed_s=5.0))
    assert (c.best_step, c.best_val_loss) == (20, 350.0)
    m.feed(Checkpointed("seed-0", 20, "/x/last.pt"))
    assert m.last_checkpoint_step == 20
    assert m.version == version + 4  # every event asks for a redraw
