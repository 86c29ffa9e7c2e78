"""Splits by source group: no source sentence is ever in two of train, validation and test.

Every output of one source shares that source's meaning, so a model that saw the source in
training has an unfair start on its other outputs at test time. Published splits often
ignore this (CSMD's dev sources mostly occur in its train split); `leak` measures it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from meaningbench.core.keys import source_group_key


@dataclass(frozen=True)
class GroupSplit:
    """Which source groups train, validate and test one model (disjoint sets)."""

    train: frozenset[str]
    val: frozenset[str]
    test: frozenset[str]
    fold: int | None = None

    def part_of(self, group: str) -> str | None:
        for name, part in (("train", self.train), ("val", self.val), ("test", self.test)):
            if group in part:
                return name
        return None


def _ordered_groups(groups: Iterable[str], seed: int) -> list[str]:
    # Sorting first makes the permutation depend only on the set of groups and the seed,
    # not on the order the study happens to list its items in.
    unique = sorted(set(groups))
    order = np.random.default_rng(seed).permutation(len(unique))
    return [unique[i] for i in order]


def _count(n: int, fraction: float) -> int:
    return max(1, int(round(n * fraction)))


def holdout_split(
    groups: Iterable[str], *, val_fraction: float, test_fraction: float, seed: int
) -> GroupSplit:
    """Random train / validation / test split of the groups (fractions of groups)."""
    ordered = _ordered_groups(groups, seed)
    n = len(ordered)
    if n < 3:
        raise ValueError(f"a train/validation/test split needs at least 3 source groups, not {n}")
    n_test = _count(n, test_fraction)
    n_val = _count(n, val_fraction)
    while n_test + n_val > n - 1:  # keep at least one group to train on
        if n_test >= n_val:
            n_test -= 1
        else:
            n_val -= 1
    test = frozenset(ordered[:n_test])
    val = frozenset(ordered[n_test : n_test + n_val])
    train = frozenset(ordered[n_test + n_val :])
    return GroupSplit(train=train, val=val, test=test)


def kfold_splits(
    groups: Iterable[str], *, k: int, val_fraction: float, seed: int
) -> list[GroupSplit]:
    """K folds by group: fold i tests on the i-th share of groups, validates on a share of
    the others and trains on the rest. Every group is a test group in exactly one fold."""
    ordered = _ordered_groups(groups, seed)
    n = len(ordered)
    if k < 2:
        raise ValueError("k-fold needs k >= 2")
    if n < k + 2 or n < 3:
        raise ValueError(f"{k} folds need at least {k + 2} source groups, not {n}")
    chunks = np.array_split(np.arange(n), k)
    splits = []
    for fold, chunk in enumerate(chunks):
        in_test = set(chunk.tolist())
        test = [ordered[i] for i in chunk]
        rest = [g for i, g in enumerate(ordered) if i not in in_test]
        n_val = min(_count(len(rest), val_fraction), len(rest) - 1)
        # Each fold draws its validation share from its own rest with a fold-specific seed, so
        # the validation groups differ between folds instead of always being the same few.
        rest_order = np.random.default_rng([seed, fold]).permutation(len(rest))
        val = [rest[i] for i in rest_order[:n_val]]
        train = [rest[i] for i in rest_order[n_val:]]
        splits.append(
            GroupSplit(train=frozenset(train), val=frozenset(val), test=frozenset(test), fold=fold)
        )
    return splits


@dataclass(frozen=True)
class LeakReport:
    """How much of an evaluation set's source sentences already occur in a training set."""

    n_eval_items: int
    n_eval_items_leaked: int
    n_eval_sources: int
    n_eval_sources_leaked: int

    @property
    def item_share(self) -> float:
        return self.n_eval_items_leaked / self.n_eval_items if self.n_eval_items else 0.0

    @property
    def source_share(self) -> float:
        return self.n_eval_sources_leaked / self.n_eval_sources if self.n_eval_sources else 0.0

    def to_json(self) -> dict[str, float | int]:
        return {
            "n_eval_items": self.n_eval_items,
            "n_eval_items_leaked": self.n_eval_items_leaked,
            "item_share": self.item_share,
            "n_eval_sources": self.n_eval_sources,
            "n_eval_sources_leaked": self.n_eval_sources_leaked,
            "source_share": self.source_share,
        }


def leak(train_sources: Sequence[str], eval_sources: Sequence[str]) -> LeakReport:
    """Share of evaluation items (and distinct sources) whose source is also a training
    source, compared after whitespace normalisation (the source-group key)."""
    seen = {source_group_key(s) for s in train_sources}
    keys = [source_group_key(s) for s in eval_sources]
    distinct = set(keys)
    return LeakReport(
        n_eval_items=len(keys),
        n_eval_items_leaked=sum(k in seen for k in keys),
        n_eval_sources=len(distinct),
        n_eval_sources_leaked=len(distinct & seen),
    )
