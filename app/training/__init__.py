"""Training a MeaningBERT-style cross-encoder on a study's ratings (Qt-free, torch imported lazily).

`train_model(TrainRequest(...), ctx, on_event)` is the one entry point; the command line
(`meaningbench train`) and the app's training dialog both call it. The names below are
loaded on first use, so importing the package (the command line does, for its defaults)
costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Checkpointed": "app.training.events",
    "EpochEnd": "app.training.events",
    "Evaluated": "app.training.events",
    "Phase": "app.training.events",
    "RunFinished": "app.training.events",
    "RunStarted": "app.training.events",
    "StepEnd": "app.training.events",
    "TrainContext": "app.training.events",
    "TrainEvent": "app.training.events",
    "event_to_dict": "app.training.events",
    "QuietContext": "app.training.job",
    "train_model": "app.training.job",
    "RunSummary": "app.training.request",
    "TrainRequest": "app.training.request",
    "TrainResult": "app.training.request",
    "load_request": "app.training.request",
    "RunProgress": "app.training.status",
    "TrainingState": "app.training.status",
    "training_state": "app.training.status",
}

__all__ = [
    "Checkpointed",
    "EpochEnd",
    "Evaluated",
    "Phase",
    "QuietContext",
    "RunFinished",
    "RunProgress",
    "RunStarted",
    "RunSummary",
    "StepEnd",
    "TrainContext",
    "TrainEvent",
    "TrainRequest",
    "TrainResult",
    "TrainingState",
    "event_to_dict",
    "load_request",
    "train_model",
    "training_state",
]

if TYPE_CHECKING:
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
    from app.training.status import RunProgress, TrainingState, training_state


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'app.training' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
