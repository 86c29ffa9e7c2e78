"""Group splits never share a source; k-fold tests every group once; the CSMD leak."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meaningbench.training.splits import holdout_split, kfold_splits, leak

groups_strategy = st.lists(st.sampled_from([f"g{i}" for i in range(40)]), min_size=3, max_size=200)


@settings(max_examples=200, deadline=None)
@given(
    items=groups_strategy,
    seed=st.integers(0, 2**31),
    val=st.floats(0.01, 0.49),
    test=st.floats(0.01, 0.49),
)
def test_holdout_parts_are_disjoint_and_cover_every_group(items, seed, val, test) -> None:
    if len(set(items)) < 3:
        with pytest.raises(ValueError):
            holdout_split(items, val_fraction=val, test_fraction=test, seed=seed)
        return
    split = holdout_split(items, val_fraction=val, test_fraction=test, seed=seed)
    assert (
        not split.train & split.val and not split.train & split.test and not split.val & split.test
    )
    assert split.train | split.val | split.test == set(items)
    assert split.train and split.val and split.test
    # Every item lands in exactly one part, through its group.
    assert all(split.part_of(g) is not None for g in items)


@settings(max_examples=150, deadline=None)
@given(items=groups_strategy, seed=st.integers(0, 2**31), k=st.integers(2, 6))
def test_kfold_tests_every_group_exactly_once(items, seed, k) -> None:
    n = len(set(items))
    if n < k + 2:
        with pytest.raises(ValueError):
            kfold_splits(items, k=k, val_fraction=0.1, seed=seed)
        return
    folds = kfold_splits(items, k=k, val_fraction=0.1, seed=seed)
    assert len(folds) == k
    tested = [g for f in folds for g in f.test]
    assert sorted(tested) == sorted(set(items))
    for f in folds:
        assert not f.train & f.val and not f.train & f.test and not f.val & f.test
        assert f.train | f.val | f.test == set(items)
        assert f.train and f.val and f.test


def test_splits_depend_on_the_seed_not_on_item_order() -> None:
    items = [f"g{i}" for i in range(30)] * 2
    a = holdout_split(items, val_fraction=0.2, test_fraction=0.2, seed=7)
    b = holdout_split(list(reversed(items)), val_fraction=0.2, test_fraction=0.2, seed=7)
    c = holdout_split(items, val_fraction=0.2, test_fraction=0.2, seed=8)
    assert a == b
    assert a != c
    assert (len(a.train), len(a.val), len(a.test)) == (18, 6, 6)


def test_leak_counts_items_and_sources_seen_in_training() -> None:
    report = leak(
        ["The cat sat.", "A dog ran."],
        ["The  cat sat.", "The cat sat.", "A bird flew.", "A dog ran."],
    )
    # Whitespace does not make a new source: 3 of 4 items, 2 of 3 distinct sources leak.
    assert (report.n_eval_items_leaked, report.n_eval_items) == (3, 4)
    assert (report.n_eval_sources_leaked, report.n_eval_sources) == (2, 3)
    assert report.item_share == pytest.approx(0.75)


def test_the_published_csmd_split_leaks(shared_datasets) -> None:
    import pandas as pd

    train = pd.read_csv(shared_datasets / "csmd" / "train.tsv", sep="\t", keep_default_na=False)
    dev = pd.read_csv(shared_datasets / "csmd" / "dev.tsv", sep="\t", keep_default_na=False)
    report = leak(train["original"].tolist(), dev["original"].tolist())
    # Oracle: plain set membership of the exact source strings (whitespace-normalised keys can
    # only find more matches, never fewer).
    exact = dev["original"].isin(set(train["original"])).sum()
    assert report.n_eval_items == len(dev) == 95
    assert report.n_eval_items_leaked >= exact
    assert report.item_share > 0.5
