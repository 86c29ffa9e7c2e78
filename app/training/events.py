"""Events a training emits, for a live loss curve (the app's dialog) or a terminal display.

They travel as the training job's messages (`ctx.send(TRAIN_EVENT, event)`), so whoever
runs the job receives them the way it receives any job's messages.

Losses are mean squared errors on the 0–100 score scale (their square root is an RMSE in
score points). Every event names its run (`fold-1-seed-0`, `seed-0`) because a training
with folds or several seeds trains several models one after the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

TRAIN_EVENT = "train_event"  # the kind of the job messages that carry a TrainEvent


@dataclass(frozen=True)
class Phase:
    """A stage without steps: loading data, tokenizing, evaluating, writing the card."""

    message: str
    run: str | None = None


@dataclass(frozen=True)
class RunStarted:
    run: str
    index: int  # 0-based position among the training's runs
    n_runs: int
    total_steps: int
    start_step: int  # > 0 when resumed from a checkpoint
    steps_per_epoch: int
    n_train: int  # training examples (after augmentation)
    n_val: int


@dataclass(frozen=True)
class StepEnd:
    run: str
    step: int  # optimizer steps done in this run, 1-based
    total_steps: int
    epoch: int  # 1-based epoch the step belongs to
    train_loss: float  # this batch
    learning_rate: float
    elapsed_s: float  # since this run (or its resume) started


@dataclass(frozen=True)
class Evaluated:
    """A validation pass; `step` 0 is the untrained model (the curve's starting point)."""

    run: str
    step: int
    epoch: float  # fractional epochs done
    val_loss: float
    train_loss: float | None  # mean over the steps since the previous evaluation
    best: bool  # the best validation loss so far: the model was saved
    elapsed_s: float


@dataclass(frozen=True)
class EpochEnd:
    run: str
    epoch: int
    step: int
    train_loss: float  # mean over the epoch's steps
    val_loss: float
    elapsed_s: float


@dataclass(frozen=True)
class Checkpointed:
    run: str
    step: int
    path: str


@dataclass(frozen=True)
class RunFinished:
    run: str
    best_step: int
    best_val_loss: float
    test: dict[str, Any]
    elapsed_s: float


TrainEvent = Phase | RunStarted | StepEnd | Evaluated | EpochEnd | Checkpointed | RunFinished
EventFn = Callable[[TrainEvent], None]


def event_to_dict(event: TrainEvent) -> dict[str, Any]:
    """A JSON-ready dict with the event's type under `event`."""
    return {"event": type(event).__name__, **asdict(event)}
