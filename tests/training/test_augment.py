"""The MeaningBERT augmentation: both orders, identical = 100, unrelated = 0, split-local."""

from __future__ import annotations

import pandas as pd

from meaningbench.analysis.controls import under_overlap_bar, words
from meaningbench.training.augment import build_examples, heldout_examples

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
