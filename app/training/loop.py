"""The optimisation of one run: MSE, AdamW, linear warm-up and decay, validation, checkpoints.

Cancellation is checked before every step; a cancelled run writes a checkpoint of the last
finished step and re-raises, so `--resume` continues exactly there. Data order comes from
(seed, epoch) and the torch RNG state travels in the checkpoint, so on the same machine and
thread count a resumed run reproduces the uninterrupted one.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from meaningbench.runtime import Cancelled, JobContext
from meaningbench.training.checkpoint import (
    LAST,
    LoopState,
    load_checkpoint,
    restore,
    save_checkpoint,
)
from meaningbench.training.encoding import epoch_batches, steps_per_epoch
from meaningbench.training.events import (
    Checkpointed,
    EpochEnd,
    Evaluated,
    EventFn,
    RunStarted,
    StepEnd,
)
from meaningbench.training.kinds import ModelKind, model_kind
from meaningbench.training.model import TARGET_SCALE
from meaningbench.training.request import TrainRequest

BEST = "best"


@dataclass(frozen=True)
class RunSpec:
    """One model to train: its name, seed, data and where its checkpoints go."""

    name: str
    seed: int
    index: int
    n_runs: int
    directory: Path
    fingerprint: str
    train: Any  # the kind's encoded examples (`Encoded`, `TextPairs`)
    val: Any

    @property
    def best_dir(self) -> Path:
        return self.directory / BEST

    @property
    def last_path(self) -> Path:
        return self.directory / LAST


def total_steps(request: TrainRequest, n_train: int) -> int:
    steps = request.epochs * steps_per_epoch(n_train, request.batch_size)
    return min(steps, request.max_steps) if request.max_steps is not None else steps


def _linear_schedule(warmup: int, total: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def _optimizer(model: Any, request: TrainRequest) -> Any:
    import torch

    # No weight decay on biases and normalisation weights (the usual BERT fine-tuning recipe).
    decay: list[Any] = []
    no_decay: list[Any] = []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if param.ndim < 2 or "LayerNorm" in name else decay).append(param)
    groups = [
        {"params": decay, "weight_decay": request.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=request.learning_rate)


def validation_loss(kind: ModelKind, model: Any, data: Any, device: str, batch_size: int) -> float:
    """Mean squared error on the 0–100 scale (unclipped: the loss the optimiser sees)."""
    if len(data) == 0:
        return math.nan
    pred = kind.predict(model, data, device=device, batch_size=batch_size)
    return float(np.mean((pred - data.targets) ** 2))


class _Run:
    """State and helpers of one run; `train` drives it."""

    def __init__(
        self,
        spec: RunSpec,
        request: TrainRequest,
        *,
        base_model: str,
        tokenizer: Any,
        device: str,
        ctx: JobContext,
        emit: EventFn,
    ) -> None:
        self.spec, self.request, self.tokenizer, self.device = spec, request, tokenizer, device
        self.ctx, self.emit = ctx, emit
        self.kind = model_kind(request)
        self.model = self.kind.load_for_training(
            base_model, seed=spec.seed, mean_target=float(np.mean(spec.train.targets))
        )
        self.model.to(device)
        self.spe = steps_per_epoch(len(spec.train), request.batch_size)
        self.total = total_steps(request, len(spec.train))
        warmup = int(round(request.warmup_ratio * self.total))
        import torch

        self.optimizer = _optimizer(self.model, request)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, _linear_schedule(warmup, self.total)
        )
        self.state = LoopState()
        self.started = time.monotonic()
        self.elapsed_before = 0.0

    def elapsed(self) -> float:
        return self.elapsed_before + (time.monotonic() - self.started)

    def resume_if_any(self) -> None:
        if self.request.resume and self.spec.last_path.is_file():
            payload = load_checkpoint(self.spec.last_path, fingerprint=self.spec.fingerprint)
            self.state = restore(
                payload, model=self.model, optimizer=self.optimizer, scheduler=self.scheduler
            )
            self.elapsed_before = self.state.elapsed_s
            self.started = time.monotonic()

    def checkpoint(self) -> None:
        self.state.elapsed_s = self.elapsed()
        save_checkpoint(
            self.spec.last_path,
            fingerprint=self.spec.fingerprint,
            state=self.state,
            model=self.model,
            optimizer=self.optimizer,
            scheduler=self.scheduler,
        )
        self.emit(Checkpointed(self.spec.name, self.state.global_step, str(self.spec.last_path)))

    def evaluate(self) -> float:
        s = self.state
        val = validation_loss(
            self.kind, self.model, self.spec.val, self.device, self.request.batch_size * 2
        )
        train_loss = s.loss_sum_since_eval / s.n_since_eval if s.n_since_eval else None
        best = bool(np.isfinite(val)) and (val < s.best_val_loss or s.best_step < 0)
        if best:
            self.kind.save(self.model, self.tokenizer, self.spec.best_dir, self.request)
            s.best_val_loss, s.best_step = val, s.global_step
        epoch = s.epoch + s.step_in_epoch / self.spe
        s.curve.append(
            {"step": s.global_step, "epoch": epoch, "train_loss": train_loss, "val_loss": val}
        )
        s.loss_sum_since_eval, s.n_since_eval = 0.0, 0
        self.emit(
            Evaluated(self.spec.name, s.global_step, epoch, val, train_loss, best, self.elapsed())
        )
        return val

    def step(self, indices: np.ndarray) -> float:
        import torch

        loss = self.kind.batch_loss(self.model, self.spec.train, indices.tolist(), self.device)
        loss.backward()
        if self.request.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.request.max_grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(loss.detach().cpu()) * TARGET_SCALE**2

    def train(self) -> LoopState:
        s, spec = self.state, self.spec
        self.emit(
            RunStarted(
                spec.name, spec.index, spec.n_runs, self.total, s.global_step, self.spe,
                len(spec.train), len(spec.val),
            )
        )  # fmt: skip
        if s.global_step == 0 and not s.curve:
            self.evaluate()  # the untrained model: the curve's first point
        self.model.train()
        try:
            while s.global_step < self.total:
                batches = epoch_batches(
                    spec.train.lengths, self.request.batch_size, seed=spec.seed, epoch=s.epoch
                )
                for indices in batches[s.step_in_epoch :]:
                    if s.global_step >= self.total:
                        break
                    self.ctx.check()
                    loss = self.step(indices)
                    s.global_step += 1
                    s.step_in_epoch += 1
                    s.loss_sum_since_eval += loss
                    s.n_since_eval += 1
                    s.loss_sum_epoch += loss
                    s.n_epoch += 1
                    lr = float(self.scheduler.get_last_lr()[0])
                    self.emit(
                        StepEnd(
                            spec.name, s.global_step, self.total, s.epoch + 1, loss, lr,
                            self.elapsed(),
                        )
                    )  # fmt: skip
                    epoch_done = s.step_in_epoch == len(batches)
                    eval_every = self.request.eval_steps
                    if eval_every and s.global_step % eval_every == 0 and not epoch_done:
                        self.evaluate()
                    if s.global_step % self.request.checkpoint_steps == 0 and not epoch_done:
                        self.checkpoint()
                if s.step_in_epoch == len(batches):
                    self._end_epoch()
                elif s.global_step >= self.total and (
                    not s.curve or s.curve[-1]["step"] != s.global_step
                ):
                    self.evaluate()  # stopped by max_steps inside an epoch
        except Cancelled:
            self.checkpoint()
            raise
        s.elapsed_s = self.elapsed()
        return s

    def _end_epoch(self) -> None:
        s = self.state
        mean_loss = s.loss_sum_epoch / s.n_epoch if s.n_epoch else math.nan
        already = bool(s.curve) and s.curve[-1]["step"] == s.global_step
        val = s.curve[-1]["val_loss"] if already else self.evaluate()
        s.epochs.append(
            {"epoch": s.epoch + 1, "step": s.global_step, "train_loss": mean_loss, "val_loss": val}
        )
        self.emit(
            EpochEnd(self.spec.name, s.epoch + 1, s.global_step, mean_loss, val, self.elapsed())
        )
        s.epoch += 1
        s.step_in_epoch = 0
        s.loss_sum_epoch, s.n_epoch = 0.0, 0
        self.checkpoint()


def train_run(
    spec: RunSpec,
    request: TrainRequest,
    *,
    base_model: str,
    tokenizer: Any,
    device: str,
    ctx: JobContext,
    emit: EventFn,
) -> LoopState:
    """Train one run to its end (or resume it); the best model is in `spec.best_dir`."""
    run = _Run(
        spec,
        request,
        base_model=base_model,
        tokenizer=tokenizer,
        device=device,
        ctx=ctx,
        emit=emit,
    )
    run.resume_if_any()
    state = run.train()
    del run
    with contextlib.suppress(Exception):
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return state
