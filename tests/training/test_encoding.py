"""Batches cover every example once per epoch, deterministically; padding matches the tokenizer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meaningbench.training.augment import Example
from meaningbench.training.encoding import collate, encode, epoch_batches, steps_per_epoch


@settings(max_examples=100, deadline=None)
@given(
    lengths=st.lists(st.integers(3, 300), min_size=1, max_size=400),
    batch=st.integers(1, 40),
    seed=st.integers(0, 1000),
    epoch=st.integers(0, 20),
)
def test_an_epoch_is_a_permutation_in_full_batches(lengths, batch, seed, epoch) -> None:
    arr = np.array(lengths)
    batches = epoch_batches(arr, batch, seed=seed, epoch=epoch)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    assert len(batches) == steps_per_epoch(len(lengths), batch)
    assert sum(len(b) < batch for b in batches) <= 1
    again = epoch_batches(arr, batch, seed=seed, epoch=epoch)
    assert all(np.array_equal(a, b) for a, b in zip(batches, again, strict=True))


def test_epochs_differ_and_batches_group_similar_lengths() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(10, 200, size=800)
    e0 = epoch_batches(lengths, 16, seed=0, epoch=0)
    e1 = epoch_batches(lengths, 16, seed=0, epoch=1)
    assert not all(np.array_equal(a, b) for a, b in zip(e0, e1, strict=True))
    padded = sum(len(b) * lengths[b].max() for b in e0)
    random_order = rng.permutation(800)
    padded_random = sum(16 * lengths[random_order[i : i + 16]].max() for i in range(0, 800, 16))
    assert padded < 0.8 * padded_random


def test_collate_pads_like_the_tokenizer(tiny_encoder) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_encoder))
    examples = [
        Example("A short source.", "Short.", 50.0, "rated"),
        Example(
            "A much longer source sentence with many words in it.", "Its output.", 20.0, "rated"
        ),
    ]
    data = encode(tokenizer, examples, max_length=512)
    batch = collate(data, [0, 1], "cpu")
    oracle = tokenizer(
        [e.text_a for e in examples],
        [e.text_b for e in examples],
        padding=True,
        truncation="longest_first",
        max_length=512,
        return_tensors="pt",
    )
    for key in ("input_ids", "attention_mask", "token_type_ids"):
        assert batch[key].tolist() == oracle[key].tolist()
    assert data.targets.tolist() == [50.0, 20.0]


def test_truncation_is_longest_first(tiny_encoder) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_encoder))
    long = " ".join(["word"] * 100)
    data = encode(tokenizer, [Example(long, "short output", 0.0, "rated")], max_length=32)
    ids = data.features["input_ids"][0]
    assert len(ids) == 32
    # The short output survives whole: only the longer side was cut.
    assert tokenizer.decode(ids).endswith("short output [SEP]")


@pytest.mark.parametrize("n,batch,expected", [(1, 16, 1), (16, 16, 1), (17, 16, 2), (160, 16, 10)])
def test_steps_per_epoch(n, batch, expected) -> None:
    assert steps_per_epoch(n, batch) == expected
