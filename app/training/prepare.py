"""From the study's targets to encoded examples per split: the data side of a training."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from meaningbench.errors import UserError
from meaningbench.training.augment import (
    Example,
    build_examples,
    example_shares,
    heldout_examples,
)
from meaningbench.training.data import TargetTable
from meaningbench.training.kinds import model_kind
from meaningbench.training.request import TrainRequest
from meaningbench.training.splits import GroupSplit, holdout_split, kfold_splits


def plan_splits(request: TrainRequest, targets: TargetTable) -> list[GroupSplit]:
    groups = targets.frame["source_group"].tolist()
    try:
        if request.folds is not None:
            return kfold_splits(
                groups, k=request.folds, val_fraction=request.val_fraction, seed=request.split_seed
            )
        return [
            holdout_split(
                groups,
                val_fraction=request.val_fraction,
                test_fraction=request.test_fraction,
                seed=request.split_seed,
            )
        ]
    except ValueError as exc:
        raise UserError(
            f"cannot split {targets.n_items} rated items in {targets.n_groups} source groups: {exc}"
        ) from None


@dataclass
class SplitData:
    """One split's items and encoded examples (train and validation augmented, test not)."""

    split: GroupSplit
    items: dict[str, pd.DataFrame]  # train / val / test rows of the target table
    examples: dict[str, list[Example]]
    encoded: dict[str, Any]  # the kind's encoded examples per part

    def stats(self) -> dict[str, Any]:
        parts = {}
        for part, frame in self.items.items():
            parts[part] = {
                "groups": int(frame["source_group"].nunique()),
                "items": len(frame),
                "examples": len(self.examples[part]),
                "augmentation": example_shares(self.examples[part]),
            }
        return {"fold": self.split.fold, "parts": parts}


def prepare_split(
    request: TrainRequest, targets: TargetTable, split: GroupSplit, tokenizer: Any
) -> SplitData:
    frame = targets.frame
    part_of = frame["source_group"].map(split.part_of)
    items = {
        part: frame[part_of == part].reset_index(drop=True) for part in ("train", "val", "test")
    }
    tag = f"{request.split_seed}:{split.fold if split.fold is not None else 'holdout'}"
    examples = {
        part: build_examples(
            items[part],
            request.augment or (),
            seed=f"{tag}:{part}",
            sanity_share=request.sanity_share,
        )
        for part in ("train", "val")
    }
    examples["test"] = heldout_examples(items["test"])
    kind = model_kind(request)
    encoded = {part: kind.encode(tokenizer, ex, request) for part, ex in examples.items()}
    return SplitData(split=split, items=items, examples=examples, encoded=encoded)


def run_name(split: GroupSplit, seed: int) -> str:
    return f"seed-{seed}" if split.fold is None else f"fold-{split.fold + 1}-seed-{seed}"
