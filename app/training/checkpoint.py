"""Resumable checkpoints of one run: weights, optimizer, scheduler, RNG state and position.

A checkpoint is written atomically (temporary file, then rename), so a crash while saving
leaves the previous one intact. It holds only tensors and plain values and is read back with
`torch.load(weights_only=True)`: opening a checkpoint folder never runs code from it.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from meaningbench.errors import UserError

CHECKPOINT_FORMAT = 1
LAST = "last.pt"
# A small sidecar of the checkpoint's position and curve: a dialog can show where a paused
# training stands without loading torch or the weights.
LAST_INFO = "last.json"


@dataclass
class LoopState:
    """Where a run stands; everything the loop needs besides weights and optimizer."""

    global_step: int = 0
    epoch: int = 0  # 0-based epoch in progress
    step_in_epoch: int = 0  # batches of that epoch already done
    best_val_loss: float = math.inf
    best_step: int = -1
    elapsed_s: float = 0.0  # training time summed over the run and its resumes
    loss_sum_since_eval: float = 0.0
    n_since_eval: int = 0
    loss_sum_epoch: float = 0.0
    n_epoch: int = 0
    curve: list[dict[str, Any]] = field(default_factory=list)  # one entry per evaluation
    epochs: list[dict[str, Any]] = field(default_factory=list)  # one entry per finished epoch

    def to_plain(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_plain(cls, raw: dict[str, Any]) -> LoopState:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})


def save_checkpoint(
    path: Path,
    *,
    fingerprint: str,
    state: LoopState,
    model: Any,
    optimizer: Any,
    scheduler: Any,
) -> None:
    import torch

    payload = {
        "format": CHECKPOINT_FORMAT,
        "fingerprint": fingerprint,
        "state": state.to_plain(),
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)
    info = path.with_name(LAST_INFO)
    info_tmp = info.with_name(LAST_INFO + ".tmp")
    plain = state.to_plain()
    plain["best_val_loss"] = None if math.isinf(state.best_val_loss) else state.best_val_loss
    info_tmp.write_text(json.dumps(plain), encoding="utf-8")
    info_tmp.replace(info)


def load_checkpoint(path: Path, *, fingerprint: str) -> dict[str, Any]:
    """The checkpoint's payload; UserError when it belongs to another training config."""
    import torch

    try:
        payload: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a truncated or foreign file: say which and why
        raise UserError(f"{path}: cannot read the checkpoint ({exc})") from exc
    if payload.get("format") != CHECKPOINT_FORMAT:
        raise UserError(f"{path}: a checkpoint of an unknown format")
    if payload.get("fingerprint") != fingerprint:
        raise UserError(
            f"{path}: this checkpoint was written by a training with other settings or other "
            "data; start a new training in another folder instead of resuming"
        )
    return payload


def restore(payload: dict[str, Any], *, model: Any, optimizer: Any, scheduler: Any) -> LoopState:
    import torch

    model.load_state_dict(payload["model"])
    optimizer.load_state_dict(payload["optimizer"])
    scheduler.load_state_dict(payload["scheduler"])
    torch.set_rng_state(payload["torch_rng"])
    if payload.get("cuda_rng") and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(payload["cuda_rng"])
    return LoopState.from_plain(payload["state"])
