"""Running a model over many inputs: length buckets, out-of-memory back-off, the device."""

from __future__ import annotations

import pytest
import torch

from meaningbench.errors import UserError
from meaningbench.metrics.neural.support.batching import length_batches, run_in_batches
from meaningbench.metrics.neural.support.models import effective_precision, resolve_device
from meaningbench.runtime import Cancelled, CancelToken


def test_batches_group_similar_lengths_longest_first() -> None:
    lengths = [5, 40, 7, 38, 6, 41]
    batches = length_batches(lengths, 2)
    # 38 and 7 do not share a batch: 7 would be padded to 38.
    assert [[lengths[i] for i in b] for b in batches] == [[41, 40], [38], [7, 6], [5]]
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))


def test_a_batch_ends_where_padding_would_exceed_a_tenth_of_its_longest_input() -> None:
    lengths = [100] + [90] * 5 + [89] * 3 + [30] * 70 + [4, 3, 2]
    batches = [[lengths[i] for i in b] for b in length_batches(lengths, 64)]
    assert batches == [
        [100, 90, 90, 90, 90, 90],  # 90 is padded by exactly a tenth of 100
        [89, 89, 89],  # 89 would be padded by 11 %
        [30] * 64,  # full batches are still cut at the batch size
        [30] * 6,
        [4, 3, 2],  # a couple of tokens of padding is always allowed
    ]


def _fails_above(limit: int, seen: list[int]):  # noqa: ANN202
    """A model step that runs out of memory on batches larger than `limit`, as a GPU does."""

    def step(batch: list[int]) -> list[int]:
        seen.append(len(batch))
        if len(batch) > limit:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [x * 10 for x in batch]

    return step


def test_out_of_memory_halves_the_batch_and_keeps_the_smaller_size() -> None:
    items = list(range(20))
    seen: list[int] = []
    out = run_in_batches(items, [1] * 20, _fails_above(5, seen), batch_size=16)
    assert out == [x * 10 for x in items]  # every result, in input order
    assert seen[:3] == [16, 8, 4]  # halved until it fits
    assert max(seen[3:]) <= 4  # and stays small for the rest of the run


def test_out_of_memory_on_a_single_input_is_a_clear_error() -> None:
    with pytest.raises(UserError, match="out of memory on a single input"):
        run_in_batches([1, 2], [1, 1], _fails_above(0, []), batch_size=2)


def test_other_errors_are_not_taken_for_out_of_memory() -> None:
    def broken(batch: list[int]) -> list[int]:
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        run_in_batches([1, 2, 3], [1, 1, 1], broken, batch_size=2)


def test_cancel_is_checked_between_batches() -> None:
    token = CancelToken()
    done: list[int] = []

    def step(batch: list[int]) -> list[int]:
        done.extend(batch)
        token.cancel()
        return batch

    with pytest.raises(Cancelled):
        run_in_batches(list(range(10)), [1] * 10, step, batch_size=3, cancel=token)
    assert len(done) == 3


def test_device_choice() -> None:
    assert resolve_device("cpu") == "cpu"
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    if expected == "cpu" and torch.backends.mps.is_available():
        expected = "mps"
    assert resolve_device("auto") == resolve_device(None) == expected
    with pytest.raises(UserError, match="unknown device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(UserError, match="no CUDA GPU"):
            resolve_device("cuda")
    assert effective_precision("bf16", "cpu") == "fp32"  # half precision only on a GPU
    assert effective_precision("bf16", "cuda") == "bf16"
