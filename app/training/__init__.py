"""Training a MeaningBERT-style cross-encoder or a Sentence-BERT bi-encoder on a study's ratings
(Qt-free, torch imported lazily).

`train_model(TrainRequest(...), ctx, on_event)` is the one entry point, a job like any
other (`ctx` is a `meaningbench.runtime.JobContext`; its events also go out as
`ctx.send(TRAIN_EVENT, event)`); the command line (`meaningbench train`) and the app's
training dialog both call it. The names below are
loaded on first use, so importing the package (the command line does, for its defaults)
costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Checkpointed": "meaningbench.training.events",
    "EpochEnd": "meaningbench.training.events",
    "Evaluated": "meaningbench.training.events",
    "Phase": "meaningbench.training.events",
    "RunFinished": "meaningbench.training.events",
    "RunStarted": "meaningbench.training.events",
    "StepEnd": "meaningbench.training.events",
    "TRAIN_EVENT": "meaningbench.training.events",
    "TrainEvent": "meaningbench.training.events",
    "event_to_dict": "meaningbench.training.events",
    "train_model": "meaningbench.training.job",
    "RunSummary": "meaningbench.training.request",
    "TrainRequest": "meaningbench.training.request",
    "TrainResult": "meaningbench.training.request",
    "load_request": "meaningbench.training.request",
    "RunProgress": "meaningbench.training.status",
    "TrainingState": "meaningbench.training.status",
    "training_state": "meaningbench.training.status",
}

__all__ = [
    "Checkpointed",
    "EpochEnd",
    "Evaluated",
    "Phase",
    "RunFinished",
    "RunProgress",
    "RunStarted",
    "RunSummary",
    "StepEnd",
    "TRAIN_EVENT",
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
        event_to_dict,
    )
    from meaningbench.training.job import train_model
    from meaningbench.training.request import RunSummary, TrainRequest, TrainResult, load_request
    from meaningbench.training.status import RunProgress, TrainingState, training_state


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'meaningbench.training' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
