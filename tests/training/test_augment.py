"""The MeaningBERT augmentation: both orders, identical = 100, unrelated = 0, split-local,
and the identical and unrelated pairs as a share of the examples."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from meaningbench.core.controls import under_overlap_bar, words
from meaningbench.training.augment import (
    build_examples,
    control_counts,
    example_shares,
    heldout_examples,
)

from .conftest import synthetic_rows


def _items(n_sources: int = 12, per_source: int = 3, seed: int = 0) -> pd.DataFrame:
    rows = synthetic_rows(n_sources, per_source, seed=seed)
    frame = pd.DataFrame(rows).rename(columns={"rating": "target"})
    frame["item_id"] = range(1, len(frame) + 1)
    return frame


def test_no_augmentation_is_the_rated_pairs_as_given() -> None:
    items = _items()
    examples = build_examples(items, (), seed=0)
    assert [(e.text_a, e.text_b, e.target) for e in examples] == list(
        zip(items["source"], items["output"], items["target"], strict=True)
    )
    assert heldout_examples(items) == examples


def test_swap_adds_the_reverse_order_with_the_same_target() -> None:
    items = _items()
    examples = build_examples(items, ("swap",), seed=0)
    pairs = {(e.text_a, e.text_b): e.target for e in examples}
    assert len(examples) == 2 * len(items)
    for s, o, t in zip(items["source"], items["output"], items["target"], strict=True):
        assert pairs[(s, o)] == t and pairs[(o, s)] == t


def test_identical_and_unrelated_controls_per_source() -> None:
    items = _items(n_sources=15)
    examples = build_examples(items, ("identical", "unrelated", "swap"), seed=3)
    sources = set(items["source"])
    texts = sources | set(items["output"])
    identical = [e for e in examples if e.kind == "identical"]
    unrelated = [e for e in examples if e.kind == "unrelated"]
    assert sorted(e.text_a for e in identical) == sorted(sources)
    assert all(e.text_a == e.text_b and e.target == 100.0 for e in identical)
    assert sorted(e.text_a for e in unrelated) == sorted(sources)
    for e in unrelated:
        assert e.target == 0.0
        if e.text_b in texts:
            # A real sentence of the same split, under the sanity checks' overlap bar.
            assert under_overlap_bar(e.text_a, e.text_b)
        else:
            # A word soup: no word of the source, words only from this split's texts.
            own = {w.lower() for w in words(e.text_a)}
            vocab = {w.lower() for t in texts for w in words(t)}
            assert not own & {w.lower() for w in words(e.text_b)}
            assert {w.lower() for w in words(e.text_b)} <= vocab
    swapped = {(e.text_a, e.text_b) for e in examples if e.kind == "unrelated-swapped"}
    assert swapped == {(e.text_b, e.text_a) for e in unrelated}


def test_augmentation_is_deterministic_in_its_seed() -> None:
    items = _items()
    a = build_examples(items, ("identical", "unrelated", "swap"), seed="0:holdout:train")
    b = build_examples(items, ("identical", "unrelated", "swap"), seed="0:holdout:train")
    c = build_examples(items, ("identical", "unrelated", "swap"), seed="1:holdout:train")
    assert a == b
    assert a != c


# -- the sanity share: identical and unrelated pairs as a share of the examples -------------

ALL = ("identical", "unrelated", "swap")


def _grouped(n_sources: int = 12, per_source: int = 3, seed: int = 0) -> pd.DataFrame:
    """Items as the training's target table has them: with their source group."""
    frame = _items(n_sources, per_source, seed)
    frame["source_group"] = [f"g{i}" for i in frame["source"].factorize()[0]]
    return frame


def test_each_control_kind_makes_up_its_share_of_the_examples() -> None:
    items = _grouped(n_sources=15)
    examples = build_examples(items, ALL, seed=0, sanity_share=(0.3, 0.3))
    kinds = Counter(e.kind for e in examples)
    n_rated = kinds["rated"] + kinds["rated-swapped"]
    assert n_rated == 2 * len(items)  # every rated pair in both orders, as without a share
    n_unrelated = kinds["unrelated"] + kinds["unrelated-swapped"]
    # 90 rated examples are 40 % of 225, so each control kind gets 30 % of 225 = 67.5 → 68.
    assert kinds["identical"] == 68 and n_unrelated == 68
    assert kinds["identical"] / len(examples) == pytest.approx(0.3, abs=0.01)
    recorded = example_shares(examples)
    assert recorded["counts"] == dict(sorted(kinds.items()))
    assert recorded["shares"]["identical"] == pytest.approx(68 / len(examples))
    assert recorded["shares"]["unrelated"] == pytest.approx(68 / len(examples))
    # Shares of their own: 90 rated examples are 30 % of 300; 60 % identical, 10 % unrelated.
    kinds = Counter(e.kind for e in build_examples(items, ALL, seed=0, sanity_share=(0.6, 0.1)))
    assert kinds["identical"] == 180 and kinds["unrelated"] + kinds["unrelated-swapped"] == 30
    assert recorded["shares"]["swapped"] == pytest.approx(len(items) / len(examples))
    assert recorded["shares"]["augmented"] == pytest.approx(1 - len(items) / len(examples))


def test_identical_pairs_cover_every_source_then_the_outputs() -> None:
    items = _grouped(n_sources=15)
    examples = build_examples(items, ALL, seed=0, sanity_share=(0.3, 0.3))
    identical = [e for e in examples if e.kind == "identical"]
    assert all(e.text_a == e.text_b and e.target == 100.0 for e in identical)
    sources, outputs = set(items["source"]), set(items["output"]) - set(items["source"])
    texts = [e.text_a for e in identical]
    n = len(sources) + len(outputs)
    assert len(texts) > n  # 68 pairs for 60 distinct texts: the cycle starts again
    # First every source (the texts the sanity checks pair with themselves), then every
    # other output of the same split, each once; then again in the same order.
    assert set(texts[: len(sources)]) == sources
    assert set(texts[len(sources) : n]) == outputs and len(set(texts[:n])) == n
    assert texts[n:] == texts[: len(texts) - n]


def test_unrelated_pairs_come_from_other_source_groups_in_both_orders() -> None:
    items = _grouped(n_sources=15)
    examples = build_examples(items, ALL, seed=5, sanity_share=(0.3, 0.3))
    group = dict(zip(items["source"], items["source_group"], strict=True))
    group.update(zip(items["output"], items["source_group"], strict=True))
    vocab = {w.lower() for t in group for w in words(t)}
    unrelated = [e for e in examples if e.kind == "unrelated"]
    assert unrelated and all(e.target == 0.0 for e in unrelated)
    real = 0
    for e in unrelated:
        if e.text_b in group:
            real += 1
            assert group[e.text_b] != group[e.text_a]
            assert under_overlap_bar(e.text_a, e.text_b)
        else:  # a word soup of the split's words, none of them the text's own
            soup = {w.lower() for w in words(e.text_b)}
            assert soup <= vocab and not soup & {w.lower() for w in words(e.text_a)}
    assert 0 < real < len(unrelated)  # both kinds of unrelated text are used
    swapped = [(e.text_a, e.text_b) for e in examples if e.kind == "unrelated-swapped"]
    assert set(swapped) <= {(e.text_b, e.text_a) for e in unrelated}
    assert len(swapped) >= len(unrelated) - 1  # the last pair may lack its copy (the count)
    assert all(e.target == 0.0 for e in examples if e.kind == "unrelated-swapped")


def test_controls_use_only_the_texts_of_their_own_split() -> None:
    train = _grouped(n_sources=12, seed=1)
    heldout = _grouped(n_sources=6, seed=2)
    heldout_texts = set(heldout["source"]) | set(heldout["output"])
    train_texts = set(train["source"]) | set(train["output"])
    train_vocab = {w.lower() for t in train_texts for w in words(t)}
    for share in ((0.1, 0.1), (0.3, 0.3), (0.6, 0.1), (0.1, 0.6)):
        for e in build_examples(train, ALL, seed="0:holdout:train", sanity_share=share):
            for text in (e.text_a, e.text_b):
                assert text not in heldout_texts
                if text not in train_texts:  # a word soup
                    assert {w.lower() for w in words(text)} <= train_vocab


def test_the_shared_controls_are_reproducible_from_the_seed() -> None:
    items = _grouped()
    a = build_examples(items, ALL, seed="0:holdout:train", sanity_share=(0.3, 0.3))
    b = build_examples(items.sample(frac=1.0, random_state=3), ALL, seed="0:holdout:train",
                       sanity_share=(0.3, 0.3))  # fmt: skip
    c = build_examples(items, ALL, seed="1:holdout:train", sanity_share=(0.3, 0.3))
    controls = [e for e in a if e.kind not in ("rated", "rated-swapped")]
    # The same seed draws the same controls, whatever the order of the items.
    assert controls == [e for e in b if e.kind not in ("rated", "rated-swapped")]
    assert controls != [e for e in c if e.kind not in ("rated", "rated-swapped")]


def test_no_share_is_the_rule_of_one_pair_per_source() -> None:
    items = _grouped(n_sources=15)
    old = build_examples(items.drop(columns="source_group"), ALL, seed=3)
    assert build_examples(items, ALL, seed=3, sanity_share=None) == old
    kinds = Counter(e.kind for e in old)
    assert kinds["identical"] == kinds["unrelated"] == items["source"].nunique()
    # Without identical and unrelated, the share changes nothing: only the rated pairs.
    for augment in ((), ("swap",)):
        assert build_examples(items, augment, seed=3, sanity_share=(0.3, 0.3)) == build_examples(
            items, augment, seed=3
        )


def test_one_control_kind_alone_takes_its_share() -> None:
    items = _grouped()
    examples = build_examples(items, ("identical",), seed=0, sanity_share=(0.2, 0.3))
    kinds = Counter(e.kind for e in examples)
    assert set(kinds) == {"rated", "identical"}
    # Without unrelated pairs their share goes to the rated ones: 36 / 0.8 × 0.2 = 9.
    assert kinds["identical"] == control_counts(len(items), 0.2, 0.0)[0] == 9
