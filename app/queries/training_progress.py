"""Where a running training stands, as the dialog shows it, built from the training's events.

Qt-free on purpose: the arithmetic (smoothed losses, progress over several runs, time
left) is tested without widgets. The dialog feeds events on the GUI thread and redraws
from this state on a timer, so a burst of fast steps costs one redraw, not one per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from meaningbench.training.events import (
    TRAIN_EVENT,
    Checkpointed,
    EpochEnd,
    Evaluated,
    Phase,
    RunFinished,
    RunStarted,
    StepEnd,
    TrainEvent,
)

# The message kind a training job reports its events under; the dialog feeds those to the
# monitor.
__all__ = ["SMOOTHING", "TRAIN_EVENT", "RunCurves", "TrainingMonitor"]

# Smoothing of the per-batch loss (an exponential moving average, corrected for its start
# at zero as TensorBoard does): one batch of 16 pairs is too noisy to read a trend from.
SMOOTHING = 0.9


@dataclass
class RunCurves:
    """The loss curves of one run (a fold and seed); steps count from 1 within the run."""

    name: str
    steps: list[int] = field(default_factory=list)
    batch_loss: list[float] = field(default_factory=list)
    smooth_loss: list[float] = field(default_factory=list)
    val_steps: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    # Mean training loss between validations: all a checkpoint keeps of the batch losses.
    mean_steps: list[int] = field(default_factory=list)
    mean_loss: list[float] = field(default_factory=list)
    best_step: int | None = None
    best_val_loss: float | None = None
    _ema: float = 0.0
    _n_ema: int = 0

    def add_step(self, step: int, loss: float) -> None:
        if self.steps and step <= self.steps[-1]:
            return  # a replayed step (never expected; keeps the curve monotonic if it is)
        self._ema = SMOOTHING * self._ema + (1.0 - SMOOTHING) * loss
        self._n_ema += 1
        self.steps.append(step)
        self.batch_loss.append(loss)
        self.smooth_loss.append(self._ema / (1.0 - SMOOTHING**self._n_ema))

    def add_evaluation(
        self, step: int, val_loss: float | None, train_loss: float | None, best: bool
    ) -> None:
        if self.val_steps and step == self.val_steps[-1]:
            return  # the same evaluation seen twice (a checkpoint's curve, then its event)
        if val_loss is not None and math.isfinite(val_loss):
            self.val_steps.append(step)
            self.val_loss.append(val_loss)
            if best:
                self.best_step, self.best_val_loss = step, val_loss
        if train_loss is not None and math.isfinite(train_loss):
            self.mean_steps.append(step)
            self.mean_loss.append(train_loss)


@dataclass
class TrainingMonitor:
    """Curves per run, position, phase and speed of the training the dialog watches."""

    runs: dict[str, RunCurves] = field(default_factory=dict)
    current: str | None = None
    run_index: int = 0
    n_runs: int = 1
    run_total: int = 0  # optimizer steps of the current run
    steps_per_epoch: int = 0
    step: int = 0  # steps done in the current run
    epoch: int = 0  # 1-based epoch of the last step
    phase: str = ""
    n_train: int = 0
    n_val: int = 0
    last_checkpoint_step: int | None = None
    finished_runs: list[str] = field(default_factory=list)
    # Bumped on every change: the view redraws when it differs from what it drew.
    version: int = 0
    # Speed: the first step this session saw of the current run, and the latest.
    _first: tuple[int, float] | None = None
    _last: tuple[int, float] | None = None
    # Steps of runs that ended (or that a resume found finished), for overall progress.
    _done_before: int = 0

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]

    def curves(self, run: str) -> RunCurves:
        if run not in self.runs:
            self.runs[run] = RunCurves(run)
        return self.runs[run]

    # -- feeding ------------------------------------------------------------------------

    def seed_from_checkpoint(self, run: str, curve: list[dict[str, Any]]) -> None:
        """Draw what a paused run's checkpoint holds before its training continues."""
        c = self.curves(run)
        best: float | None = None
        for point in curve:
            val = point.get("val_loss")
            is_best = val is not None and (best is None or val < best)
            if is_best:
                best = val
            c.add_evaluation(int(point.get("step", 0)), val, point.get("train_loss"), is_best)
        self.version += 1

    def feed(self, event: TrainEvent) -> None:
        if isinstance(event, StepEnd):
            self.curves(event.run).add_step(event.step, event.train_loss)
            self.current, self.step, self.epoch = event.run, event.step, event.epoch
            self.run_total = event.total_steps
            self._last = (event.step, event.elapsed_s)
            if self._first is None:
                self._first = self._last
            self.phase = ""
        elif isinstance(event, Evaluated):
            self.curves(event.run).add_evaluation(
                event.step, event.val_loss, event.train_loss, event.best
            )
        elif isinstance(event, RunStarted):
            self._start_run(event)
        elif isinstance(event, Phase):
            self.phase = event.message
        elif isinstance(event, Checkpointed):
            self.last_checkpoint_step = event.step
        elif isinstance(event, RunFinished):
            self.finished_runs.append(event.run)
        elif isinstance(event, EpochEnd):
            pass  # its validation arrived as an Evaluated event
        self.version += 1

    def _start_run(self, event: RunStarted) -> None:
        if self.current is not None and self.current != event.run:
            self._done_before += self.run_total
        elif self.current is None:
            # A resume skips the runs it finished before: count them as done.
            self._done_before = event.index * event.total_steps
        self.current = event.run
        self.run_index, self.n_runs = event.index, event.n_runs
        self.run_total, self.steps_per_epoch = event.total_steps, event.steps_per_epoch
        self.step = event.start_step
        self.epoch = event.start_step // event.steps_per_epoch + 1 if event.steps_per_epoch else 1
        self.n_train, self.n_val = event.n_train, event.n_val
        self._first = self._last = None
        self.curves(event.run)

    # -- reading ------------------------------------------------------------------------

    @property
    def n_epochs(self) -> int:
        if not self.steps_per_epoch:
            return 0
        return math.ceil(self.run_total / self.steps_per_epoch)

    @property
    def overall_total(self) -> int:
        """Steps of the whole training; later runs are taken to be as long as this one
        (folds differ by a few examples, so by a step or two at most)."""
        return self._done_before + self.run_total * (self.n_runs - self.run_index)

    @property
    def overall_done(self) -> int:
        return self._done_before + self.step

    def seconds_per_step(self) -> float | None:
        """Over the steps seen since this run (or its resume) started, validations included."""
        if self._first is None or self._last is None or self._last[0] <= self._first[0]:
            return None
        return (self._last[1] - self._first[1]) / (self._last[0] - self._first[0])

    def seconds_left(self) -> float | None:
        per_step = self.seconds_per_step()
        if per_step is None:
            return None
        return max(0, self.overall_total - self.overall_done) * per_step
