"""The in-memory embedding cache stays within its byte budget and gives freed pages back."""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from meaningbench.core.heap import trim_available, trim_heap
from meaningbench.metrics.neural.support.cache import Embedding, MemoryLRU


def _emb(tokens: int, dim: int = 384) -> Embedding:
    return Embedding(tuple(range(tokens)), torch.ones(tokens, dim))


def test_an_entry_in_use_stays_while_unused_ones_go_within_the_budget() -> None:
    """A source scored against every system stays; outputs seen once leave after a lap."""
    lru = MemoryLRU(max_bytes=10 * _emb(10).vectors.numel() * 4)  # room for ten
    lru.put(("ns", "source"), _emb(10))
    for k in range(100):
        lru.put(("ns", f"output {k}"), _emb(10))
        if k % 3 == 0:
            assert lru.get(("ns", "source")) is not None, k
        assert lru.nbytes <= lru.max_bytes and len(lru) <= 10
    assert lru.get(("ns", "output 0")) is None and lru.get(("ns", "output 80")) is None
    assert lru.get(("ns", "output 99")) is not None


def test_release_trims_once_enough_new_embeddings_were_written() -> None:
    one = _emb(10).vectors.numel() * 4
    lru = MemoryLRU(max_bytes=100 * one, trim_after_bytes=3 * one)
    for k in range(2):
        lru.put(("ns", str(k)), _emb(10))
    assert lru.release() is False and lru.trims == 0
    lru.put(("ns", "2"), _emb(10))
    assert lru.release() is True and lru.trims == 1
    assert lru.release() is False and lru.trims == 1  # the count starts again


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(1, 40), st.booleans()),
        min_size=1,
        max_size=120,
    )
)
def test_ring_keeps_exact_copies_within_budget(ops: list[tuple[int, int, bool]]) -> None:
    """Random puts and gets of entries of random sizes: whatever the cache still holds is
    exactly what was put, the budget holds, and the latest entry is always there."""
    lru = MemoryLRU(max_bytes=4 * 100 * 8)  # 100 rows of 8 values
    truth: dict[str, torch.Tensor] = {}
    for serial, (key, rows, is_get) in enumerate(ops):
        name = str(key)
        if is_get:
            hit = lru.get(("ns", name))
            if hit is not None:
                assert torch.equal(hit.vectors, truth[name])
                assert hit.ids == tuple(range(truth[name].shape[0]))
            continue
        vectors = torch.full((rows, 8), float(serial)) + torch.arange(8.0)
        lru.put(("ns", name), Embedding(tuple(range(rows)), vectors))
        truth[name] = vectors.clone()
        vectors.zero_()  # the cache holds its own copy
        latest = lru.get(("ns", name))
        assert latest is not None and torch.equal(latest.vectors, truth[name])
        assert lru.nbytes <= lru.max_bytes
    for key in range(31):
        hit = lru.get(("ns", str(key)))
        if hit is not None:
            assert torch.equal(hit.vectors, truth[str(key)])


def test_a_returned_embedding_survives_eviction() -> None:
    lru = MemoryLRU(max_bytes=4 * 2 * 384 * 10)  # two entries of 10 tokens
    lru.put(("ns", "a"), _emb(10))
    held = lru.get(("ns", "a"))
    for k in range(5):
        lru.put(("ns", str(k)), Embedding(tuple(range(10)), torch.zeros(10, 384)))
    assert lru.get(("ns", "a")) is None
    assert held is not None and bool((held.vectors == 1).all())


def test_an_entry_larger_than_the_cache_is_not_kept() -> None:
    lru = MemoryLRU(max_bytes=4 * 384 * 5)
    lru.put(("ns", "big"), _emb(6))
    assert lru.get(("ns", "big")) is None and len(lru) == 0


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not trim_available(), reason="needs glibc's malloc_trim")
def test_trim_returns_pages_freed_between_live_blocks() -> None:
    # Blocks below glibc's mmap threshold live on the heap; freeing every other one leaves
    # holes that the allocator keeps resident until it is asked to trim.
    blocks = [bytearray(60_000) for _ in range(4000)]  # ~240 MB, pages touched (zeroed)
    for block in blocks:
        block[::4096] = b"\x01" * len(block[::4096])
    del blocks[::2]  # ~120 MB freed in 60 kB holes
    before = _rss_mb()
    assert trim_heap() is True
    after = _rss_mb()
    assert before - after >= 60, (before, after)
    del blocks
