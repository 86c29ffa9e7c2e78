"""Train a model on the study's ratings; a registered model becomes a battery metric."""

from __future__ import annotations

from typing import TYPE_CHECKING

from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote
from meaningbench.training.events import TRAIN_EVENT

__all__ = ["TRAIN_EVENT", "TrainRequest", "TrainResult", "train_job"]

if TYPE_CHECKING:
    from meaningbench.training.events import EventFn
    from meaningbench.training.request import TrainRequest, TrainResult


def train_job(
    request: TrainRequest, ctx: JobContext, on_event: EventFn | None = None
) -> Wrote[TrainResult]:
    """The training (its loss events travel as `ctx.send(TRAIN_EVENT, event)`, and to
    `on_event` too: the terminal's display of `meaningbench train`)."""
    from meaningbench.training import train_model

    result = train_model(request, ctx, on_event)
    return Wrote(result, StudyChanges(runs=result.registered))
