"""`train_model`: the whole training as one job — read ratings, split, train every (fold,
seed) run, evaluate, write the model and its card, register it in the study.

Qt-free and CLI-free: the command line and the app's dialog both call it with a job
context (progress, cancel, and its events as messages for live loss curves). Each finished run leaves a
`result.json`, each unfinished one a checkpoint, so `resume=True` skips what is done and
continues what is not.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from meaningbench.core.atomic_file import write_text_atomically
from meaningbench.core.json_values import clean_json
from meaningbench.errors import StudyNotFoundError, UserError
from meaningbench.runtime import JobContext
from meaningbench.training import card as cards
from meaningbench.training.checkpoint import LAST_INFO
from meaningbench.training.data import TargetTable, load_targets
from meaningbench.training.evaluate import clip_scores, regression_stats, sanity_check
from meaningbench.training.events import (
    TRAIN_EVENT,
    EventFn,
    Phase,
    RunFinished,
    StepEnd,
    TrainEvent,
)
from meaningbench.training.kinds import model_kind
from meaningbench.training.loop import RunSpec, total_steps, train_run
from meaningbench.training.model import (
    has_model_files,
    load_tokenizer,
    resolve_base_model,
    resolve_device,
    torch_threads,
)
from meaningbench.training.prepare import SplitData, plan_splits, prepare_split, run_name
from meaningbench.training.register import (
    check_model_name,
    check_name_free,
    default_model_name,
    register_model,
)
from meaningbench.training.request import (
    BI_ENCODER,
    RunSummary,
    TrainRequest,
    TrainResult,
    save_request,
)
from meaningbench.training.status import CHECKPOINTS, RESULT_FILE
from meaningbench.training.summary import build_card

FINGERPRINT_FILE = "fingerprint.json"


def _fingerprint(request: TrainRequest, data_hash: str) -> str:
    payload = {"config": request.learning_config(), "data": data_hash}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _check_out_dir(request: TrainRequest) -> Path:
    out_dir = request.out_dir
    ckpt = out_dir / CHECKPOINTS
    if request.resume:
        if not (ckpt / FINGERPRINT_FILE).is_file():
            raise UserError(f"{out_dir}: no training to resume there")
    elif ckpt.exists():
        raise UserError(
            f"{out_dir} already holds a training: add --resume to continue it, "
            "or choose another --out folder"
        )
    elif out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise UserError(f"{out_dir} is not an empty folder: choose a new or empty --out folder")
    return ckpt


def _check_fingerprint(ckpt: Path, request: TrainRequest, data_hash: str) -> str:
    fingerprint = _fingerprint(request, data_hash)
    path = ckpt / FINGERPRINT_FILE
    if request.resume:
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("fingerprint") != fingerprint:
            if saved.get("data_hash") != data_hash:
                raise UserError(
                    "the study's ratings changed since this training started; "
                    "start a new training in another folder"
                )
            old = saved.get("config", {})
            new = request.learning_config()
            differ = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            raise UserError(
                "the training in this folder used other settings "
                f"({', '.join(differ) or 'unknown'}); resume it with the same ones"
            )
        return fingerprint
    ckpt.mkdir(parents=True, exist_ok=True)
    payload = {
        "fingerprint": fingerprint,
        "data_hash": data_hash,
        "config": request.learning_config(),
    }
    write_text_atomically(path, json.dumps(payload, indent=2))
    return fingerprint


def _load_targets(request: TrainRequest, name: str | None) -> TargetTable:
    from meaningbench.analysis.data import dimension_info
    from meaningbench.db.study import open_study
    from meaningbench.training.labels import map_targets

    if not request.study.exists():
        raise StudyNotFoundError(f"{request.study}: no such study")
    with open_study(request.study) as study, study.session() as session:
        targets = load_targets(
            session, dimension=request.dimension, z=request.z_scores, labels=request.labels
        )
        if request.label_map is not None:
            dim = dimension_info(session, request.dimension)
            targets = map_targets(
                targets,
                request.label_map,
                low=dim.min_value,
                high=dim.max_value,
                between=request.label_between,
            )
        if name is not None:
            check_name_free(session, name=name, path=request.out_dir)
    return targets


def _finish_run(
    spec: RunSpec,
    data: SplitData,
    state: Any,
    request: TrainRequest,
    *,
    device: str,
    ctx: JobContext,
    before_model: Any = None,
) -> tuple[RunSummary, dict[str, list[Any]]]:
    kind = model_kind(request)
    model = kind.load_saved(spec.best_dir, device)
    test = data.encoded["test"]
    items = data.items["test"]
    values = clip_scores(kind.predict(model, test, device=device, saved=True, check=ctx.check))
    del model
    groups = items["source_group"].tolist()
    stats = regression_stats(values, test.targets, groups=groups, seed=request.split_seed)
    before: dict[str, Any] = {}
    if before_model is not None:
        base_values = kind.predict(before_model, test, device=device, check=ctx.check)
        before = regression_stats(
            clip_scores(base_values), test.targets, groups=groups, seed=request.split_seed
        )
    sanity = sanity_check(
        kind.battery_metric(spec.best_dir, device),
        items["source"].tolist(),
        n=request.sanity_n,
        seed=request.split_seed,
        cancel=ctx.cancel,
    )
    summary = RunSummary(
        name=spec.name,
        seed=spec.seed,
        fold=data.split.fold,
        steps=state.global_step,
        best_step=state.best_step,
        best_val_loss=state.best_val_loss,
        elapsed_s=state.elapsed_s,
        test=stats,
        sanity=sanity,
        curve=state.curve,
        split=data.stats(),
        test_before=before,
    )
    predictions: dict[str, list[Any]] = {
        "item_id": [int(i) for i in items["item_id"]],
        "source_group": groups,
        "value": [float(v) for v in values],
        "human": [float(v) for v in test.targets],
    }
    return summary, predictions


def _assemble(out_dir: Path, selected: RunSummary, ckpt: Path) -> None:
    best = ckpt / selected.name / "best"
    if has_model_files(best):
        for item in best.iterdir():
            if item.is_file():
                shutil.copy2(item, out_dir / item.name)
            elif item.is_dir():  # a Sentence-Transformers module folder (1_Pooling)
                shutil.copytree(item, out_dir / item.name, dirs_exist_ok=True)
        return
    previous = cards.read_card(out_dir) or {}
    if has_model_files(out_dir) and previous.get("selected_run") == selected.name:
        return  # a resume of a finished training: the model is in place already
    raise UserError(f"{best}: the trained model is missing; start the training again")


def train_model(
    request: TrainRequest, ctx: JobContext | None = None, on_event: EventFn | None = None
) -> TrainResult:
    """Train, evaluate, save and register a model (a MeaningBERT-style cross-encoder or a
    Sentence-BERT bi-encoder, as `request.kind` says) from a study's ratings."""
    started = time.monotonic()
    request.validate()
    ctx = ctx or JobContext()
    name = check_model_name(request.name) if request.name else default_model_name(request.out_dir)
    ckpt = _check_out_dir(request)

    progress = {"offset": 0, "total": 0}

    def emit(event: TrainEvent) -> None:
        if isinstance(event, StepEnd):
            ctx.progress(
                progress["offset"] + event.step,
                progress["total"],
                f"{event.run} · epoch {event.epoch} · loss {event.train_loss:.0f}",
            )
        ctx.send(TRAIN_EVENT, event)
        if on_event is not None:
            on_event(event)

    # Everything that can be refused is checked before the output folder is written to.
    base = resolve_base_model(request.base_model)
    device = resolve_device(request.device)
    emit(Phase("reading the study's ratings"))
    targets = _load_targets(request, name if request.register else None)
    splits = plan_splits(request, targets)
    tokenizer = load_tokenizer(base)
    ctx.check()
    fingerprint = _check_fingerprint(ckpt, request, targets.data_hash())
    save_request(request, ckpt)

    with torch_threads(request.threads if device == "cpu" else None) as n_threads:
        emit(Phase("building the training examples"))
        prepared = []
        for split in splits:
            ctx.check()
            prepared.append(prepare_split(request, targets, split, tokenizer))
        specs = _plan_runs(prepared, request, ckpt, fingerprint)
        progress["total"] = sum(total_steps(request, len(s.train)) for s, _ in specs)
        summaries: list[RunSummary] = []
        predictions: dict[str, dict[str, list[Any]]] = {}
        for spec, data in specs:
            summary, preds = _run_or_reuse(
                spec, data, request, base=base, tokenizer=tokenizer, device=device,
                ctx=ctx, emit=emit,
            )  # fmt: skip
            summaries.append(summary)
            predictions[spec.name] = preds
            progress["offset"] += total_steps(request, len(spec.train))

    emit(Phase("writing the model and its card"))
    selected = min(summaries, key=lambda s: (_finite(s.best_val_loss), s.name))
    selected_data = next(data for spec, data in specs if spec.name == selected.name)
    _assemble(request.out_dir, selected, ckpt)
    card = build_card(
        request, name, targets, selected, selected_data, summaries, predictions,
        device=device, threads=n_threads, base=base, elapsed=time.monotonic() - started,
    )  # fmt: skip
    cards.write_card(card, request.out_dir)
    clean_card = json.loads(json.dumps(clean_json(card)))
    registered = False
    if request.register:
        _register(request, name, clean_card)
        registered = True
    if not request.keep_checkpoints:
        _remove_checkpoints(specs)
    return TrainResult(
        out_dir=request.out_dir,
        model_dir=request.out_dir,
        name=name,
        registered=registered,
        selected_run=selected.name,
        card=clean_card,
        runs=summaries,
    )


def _register(request: TrainRequest, name: str, card: dict[str, Any]) -> None:
    from meaningbench.db.study import open_study

    # It reads the name's row, then writes: the write lock from the start (see Study.session).
    with open_study(request.study) as study, study.session(write=True) as session:
        register_model(
            session, name=name, path=request.out_dir, card=card, metric=model_kind(request).metric
        )


def _remove_checkpoints(specs: list[tuple[RunSpec, SplitData]]) -> None:
    for spec, _ in specs:
        shutil.rmtree(spec.best_dir, ignore_errors=True)


def _finite(value: float | None) -> float:
    return float(value) if value is not None and np.isfinite(value) else float("inf")


def _plan_runs(
    prepared: list[SplitData], request: TrainRequest, ckpt: Path, fingerprint: str
) -> list[tuple[RunSpec, SplitData]]:
    """One run per (split, seed), in training order; each run's checkpoints in its folder."""
    pairs = [(data, seed) for data in prepared for seed in request.seeds]
    specs = []
    for index, (data, seed) in enumerate(pairs):
        name = run_name(data.split, seed)
        spec = RunSpec(
            name=name,
            seed=seed,
            index=index,
            n_runs=len(pairs),
            directory=ckpt / name,
            fingerprint=f"{fingerprint}:{name}",
            train=data.encoded["train"],
            val=data.encoded["val"],
        )
        specs.append((spec, data))
    return specs


def _run_or_reuse(
    spec: RunSpec,
    data: SplitData,
    request: TrainRequest,
    *,
    base: str,
    tokenizer: Any,
    device: str,
    ctx: JobContext,
    emit: EventFn,
) -> tuple[RunSummary, dict[str, list[Any]]]:
    """Train and test one run, or read its result when a resumed training finished it."""
    result_path = spec.directory / RESULT_FILE
    if request.resume and result_path.is_file():
        raw = json.loads(result_path.read_text(encoding="utf-8"))
        return RunSummary.from_json(raw), raw["predictions"]
    state = train_run(
        spec, request, base_model=base, tokenizer=tokenizer, device=device, ctx=ctx, emit=emit
    )
    emit(Phase("testing the best model", run=spec.name))
    before_model = None
    if request.kind == BI_ENCODER:
        # The base encoder's zero-shot cosine is itself a metric: the card says how far the
        # training moved it on the same held-out items.
        before_model = model_kind(request).load_for_training(base, seed=spec.seed, mean_target=0)
        before_model.to(device)
    summary, preds = _finish_run(
        spec, data, state, request, device=device, ctx=ctx, before_model=before_model
    )
    del before_model
    payload = clean_json({**summary.to_json(), "predictions": preds})
    tmp = result_path.with_name(RESULT_FILE + ".tmp")
    tmp.write_text(json.dumps(payload), encoding="utf-8")
    tmp.replace(result_path)
    if not request.keep_checkpoints:
        spec.last_path.unlink(missing_ok=True)
        (spec.directory / LAST_INFO).unlink(missing_ok=True)
    emit(
        RunFinished(
            spec.name, summary.best_step, summary.best_val_loss, summary.test, summary.elapsed_s
        )
    )
    return summary, preds
