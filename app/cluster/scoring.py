"""Scoring one batch of item rows into result rows: the one function both executors (here and
on Ray) run, so a score does not depend on where it was computed.

Each metric scores the rows that need it through the scoring job's own batch function
(meaningbench.jobs.score_exec.score_with_fallback): a batch that raises is retried item by
item, and a metric that fails on everything stops the run instead of filling the results
with errors. The texts a metric sees must hash to the input hash the export recorded: the
score is then filed under exactly the texts it was computed from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from meaningbench.errors import InputError
from meaningbench.jobs.score_exec import score_with_fallback
from meaningbench.metrics.base import Metric, Pair, input_hash, resolve_references

from .checksum import COVERED, row_checksum
from .details import details_json
from .layout import ShardMetric, result_schema
from .metrics import build_metric

if TYPE_CHECKING:
    import pyarrow as pa

# Metrics built in this process (a Ray worker keeps them between tasks).
_BUILT: dict[tuple[str, str], Metric] = {}


def built_metric(entry: ShardMetric, runtime: Mapping[str, Any] | None = None) -> Metric:
    key = (entry.label, entry.config_hash)
    metric = _BUILT.get(key)
    if metric is None:
        metric = _BUILT[key] = build_metric(entry, runtime)
    return metric


def score_table(
    table: pa.Table,
    entries: Sequence[ShardMetric],
    metrics: Sequence[Metric],
    *,
    study_id: str,
    details: str,
    skip: Mapping[str, frozenset[int]] | None = None,
) -> pa.Table:
    """Result rows for every (row, metric) of `table` the metric is needed for, except the
    item ids in `skip[label]` (already scored by an earlier, interrupted run)."""
    import pyarrow as pa

    ids = table.column("item_id").to_pylist()
    sources = table.column("source").to_pylist()
    outputs = table.column("output").to_pylist()
    references = table.column("references").to_pylist()
    systems = table.column("system").to_pylist()
    needed = table.column("metrics").to_pylist()
    config_hashes = table.column("config_hashes").to_pylist()
    input_hashes = table.column("input_hashes").to_pylist()
    out: dict[str, list[Any]] = {name: [] for name in result_schema().names}
    for entry, metric in zip(entries, metrics, strict=True):
        skipped = (skip or {}).get(entry.label, frozenset())
        rows: list[tuple[int, str]] = []  # (row, input hash)
        for r, labels in enumerate(needed):
            if entry.label in labels and ids[r] not in skipped:
                k = labels.index(entry.label)
                if config_hashes[r][k] != entry.config_hash:
                    raise InputError(
                        f"item {ids[r]}: exported for {entry.label} with config hash "
                        f"{config_hashes[r][k]}, the manifest says {entry.config_hash}"
                    )
                rows.append((r, input_hashes[r][k]))
        if not rows:
            continue
        pairs = []
        for r, digest in rows:
            refs = (
                resolve_references(sources[r], references[r] or (), entry.reference_mode)
                if entry.reference_mode is not None
                else ()
            )
            if input_hash(sources[r], outputs[r], refs) != digest:
                raise InputError(
                    f"item {ids[r]}: its texts do not hash to the input hash exported for "
                    f"{entry.label}; the shard was altered, export it again"
                )
            pairs.append(Pair(ids[r], sources[r], outputs[r], refs, systems[r]))
        scores = score_with_fallback(metric, pairs, None, any_scored=False)
        for (r, digest), score in zip(rows, scores, strict=True):
            out["item_id"].append(ids[r])
            out["metric"].append(entry.label)
            out["config_hash"].append(entry.config_hash)
            out["input_hash"].append(digest)
            out["value"].append(None if score.value is None else float(score.value))
            out["raw"].append(None if score.raw is None else float(score.raw))
            out["details"].append(details_json(score.details, details))
            out["error"].append(score.error)
            out["study_id"].append(study_id)
            out["checksum"].append(row_checksum({c: out[c][-1] for c in COVERED}))
    return pa.table(out, schema=result_schema())
