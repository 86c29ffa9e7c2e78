"""Where a training in a folder stands, read from small JSON files (no torch, no weights).

For a dialog that offers "resume": which runs are finished, how far an unfinished one got,
and its loss curve so far, so the plot can be redrawn before training continues.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meaningbench.errors import UserError
from meaningbench.training.card import CARD_JSON
from meaningbench.training.checkpoint import LAST_INFO
from meaningbench.training.request import TrainRequest, load_request

CHECKPOINTS = "checkpoints"
RESULT_FILE = "result.json"


@dataclass(frozen=True)
class RunProgress:
    name: str
    finished: bool
    step: int  # optimizer steps done (0: not started)
    best_val_loss: float | None
    curve: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class TrainingState:
    out_dir: Path
    request: TrainRequest
    runs: list[RunProgress]
    finished: bool  # every run done and the model card written

    @property
    def resumable(self) -> bool:
        return not self.finished


def run_names(request: TrainRequest) -> list[str]:
    """The runs a request trains, in training order (as `prepare.run_name` names them)."""
    if request.folds is None:
        return [f"seed-{seed}" for seed in request.seeds]
    return [f"fold-{f}-seed-{seed}" for f in range(1, request.folds + 1) for seed in request.seeds]


def _read(path: Path) -> dict[str, Any] | None:
    try:
        status: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return status
    except (OSError, ValueError):
        return None


def training_state(out_dir: str | Path) -> TrainingState | None:
    """The state of the training in `out_dir`, or None when no training was started there."""
    out = Path(out_dir)
    try:
        request = load_request(out)
    except UserError:
        return None
    runs = []
    for name in run_names(request):
        folder = out / CHECKPOINTS / name
        result = _read(folder / RESULT_FILE)
        if result is not None:
            runs.append(
                RunProgress(
                    name,
                    True,
                    int(result.get("steps", 0)),
                    result.get("best_val_loss"),
                    result.get("curve", []),
                )
            )
            continue
        info = _read(folder / LAST_INFO) or {}
        runs.append(
            RunProgress(
                name,
                False,
                int(info.get("global_step", 0)),
                info.get("best_val_loss"),
                info.get("curve", []),
            )
        )
    finished = all(r.finished for r in runs) and (out / CARD_JSON).is_file()
    return TrainingState(out_dir=out, request=request, runs=runs, finished=finished)
