"""The in-memory embedding cache stays within its byte budget and gives freed pages back."""

from __future__ import annotations

import os

import pytest
import torch

from app.heap import trim_available, trim_heap
from app.metrics.neural.cache import Embedding, MemoryLRU


def _emb(tokens: int, dim: int = 384) -> Embedding:
    return Embedding(tuple(range(tokens)), torch.ones(tokens, dim))


def test_least_recently_used_entries_go_first_and_the_budget_holds() -> None:
    one = _emb(10).nbytes
    lru = MemoryLRU(max_bytes=3 * one)
    for name in "abc":
        lru.put(("ns", name), _emb(10))
    assert lru.get(("ns", "a")) is not None  # "a" is now the most recent
    lru.put(("ns", "d"), _emb(10))
    assert lru.get(("ns", "b")) is None
    assert all(lru.get(("ns", k)) is not None for k in "acd")
    assert len(lru) == 3 and lru.nbytes <= lru.max_bytes


def test_release_trims_only_after_enough_was_evicted() -> None:
    one = _emb(10).nbytes
    lru = MemoryLRU(max_bytes=2 * one, trim_after_bytes=3 * one)
    for k in range(4):  # two evictions: below the trim threshold
        lru.put(("ns", str(k)), _emb(10))
    assert lru.release() is False and lru.trims == 0
    lru.put(("ns", "4"), _emb(10))  # the third eviction reaches it
    assert lru.release() is True and lru.trims == 1
    assert lru.release() is False and lru.trims == 1  # the count starts again


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
