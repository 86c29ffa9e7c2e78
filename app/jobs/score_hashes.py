"""The scoring job's view of item texts: resolved references and input hashes per reference
mode, computed once per job, and the cache key each metric's scores are filed under."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from meaningbench.jobs.score_store import CacheKey, ItemText
from meaningbench.metrics.base import (
    Metric,
    Pair,
    input_hash,
    resolve_references,
    variant_input_hash,
)


class Hashes:
    """Per reference mode: each item's resolved references and input hash, computed once.

    A metric whose scores also depend on study data beyond the texts (SAMSA's scenes) adds
    a variant: the same references, and hashes that fold in its extra inputs, so editing
    that data makes exactly the affected scores stale.
    """

    def __init__(self, items: list[ItemText]) -> None:
        self.items = items
        self._by_mode: dict[str | None, tuple[list[tuple[str, ...]], list[str]]] = {}
        self._variant_of: dict[int, str] = {}

    def get(self, mode: str | None) -> tuple[list[tuple[str, ...]], list[str]]:
        if mode not in self._by_mode:
            if mode is None:
                refs: list[tuple[str, ...]] = [()] * len(self.items)
            elif mode == "source":
                refs = [(it.source,) for it in self.items]
            else:
                refs = [resolve_references(it.source, it.references, mode) for it in self.items]
            digests = [
                input_hash(it.source, it.output, r) for it, r in zip(self.items, refs, strict=True)
            ]
            self._by_mode[mode] = (refs, digests)
        return self._by_mode[mode]

    def pairs(self, mode: str | None) -> list[Pair]:
        refs, _ = self.get(mode)
        return [
            Pair(it.id, it.source, it.output, r, it.system)
            for it, r in zip(self.items, refs, strict=True)
        ]

    def add_variant(self, metric: Metric, mode: str | None, extras: Sequence[str]) -> None:
        refs, _ = self.get(mode)
        key = f"{mode}#{metric.name}:{metric.config_hash()}"
        digests = [
            variant_input_hash(it.source, it.output, r, extra) if extra else base
            for it, r, extra, base in zip(self.items, refs, extras, self.get(mode)[1], strict=True)
        ]
        self._by_mode[key] = (refs, digests)
        self._variant_of[id(metric)] = key

    def cache_key(self, metric: Metric) -> CacheKey:
        key = metric_cache_key(metric)
        variant = self._variant_of.get(id(metric))
        return key if variant is None else CacheKey(key.metric, key.config_hash, variant)

    def digests(self) -> dict[str | None, list[str]]:
        return {mode: digests for mode, (_, digests) in self._by_mode.items()}


def prepare_metric(metric: Metric, hashes: Hashes) -> None:
    """Hand a metric the whole study before its config is hashed (BERTScore's idf corpus),
    and register the extra inputs its scores depend on (SAMSA's scenes)."""
    prepares = type(metric).prepare is not Metric.prepare
    has_extras = type(metric).extra_inputs is not Metric.extra_inputs
    if not (prepares or has_extras):
        return
    mode = metric_cache_key(metric).mode
    pairs = hashes.pairs(mode)
    if prepares:
        metric.prepare(pairs)
    if has_extras:
        extras = metric.extra_inputs(pairs)
        if extras is not None:
            hashes.add_variant(metric, mode, extras)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building 100,000s of acyclic objects (item
    texts, hashes): its generation scans would otherwise cost as much as the work."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def metric_cache_key(metric: Metric) -> CacheKey:
    mode = metric.reference_mode if "reference_mode" in metric.defaults else None
    return CacheKey(metric.name, metric.config_hash(), mode)
