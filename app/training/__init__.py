"""Training a MeaningBERT-style cross-encoder on a study's ratings (Qt-free, torch imported lazily).

`train_model(TrainRequest(...), ctx, on_event)` is the one entry point; the command line
(`meaningbench train`) and the app's training dialog both call it.
"""

from __future__ import annotations

from app.training.events import (
    Checkpointed,
    EpochEnd,
    Evaluated,
    Phase,
    RunFinished,
    RunStarted,
    StepEnd,
    TrainContext,
    TrainEvent,
    event_to_dict,
)
from app.training.job import QuietContext, train_model
from app.training.request import RunSummary, TrainRequest, TrainResult, load_request

__all__ = [
    "Checkpointed",
    "EpochEnd",
    "Evaluated",
    "Phase",
    "QuietContext",
    "RunFinished",
    "RunStarted",
    "RunSummary",
    "StepEnd",
    "TrainContext",
    "TrainEvent",
    "TrainRequest",
    "TrainResult",
    "event_to_dict",
    "load_request",
    "train_model",
]
