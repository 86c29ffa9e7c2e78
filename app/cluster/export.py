"""`shards export`: the items of a study still missing a current score for some metric, as
Parquet shards anyone can score (see meaningbench.cluster.layout for the columns).

What counts as missing is the scoring job's own cache check (meaningbench.jobs.score_store):
an item whose error-free score for the metric's config was computed from its texts as they
are now is left out, so exporting again after a merge exports only what is still missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meaningbench.db.study_id import ensure_study_id
from meaningbench.errors import InputError
from meaningbench.jobs.metric_specs import PlannedMetric
from meaningbench.jobs.score_hashes import Hashes, collector_paused
from meaningbench.jobs.score_store import (
    CacheKey,
    CacheState,
    ItemText,
    check_cache,
    load_items,
    open_existing,
    registered_models,
    study_options,
)
from meaningbench.runtime import JobContext

from .layout import (
    DEFAULT_ROWS,
    ITEM_SHARD_GLOB,
    MANIFEST,
    Manifest,
    ShardMetric,
    item_schema,
    read_manifest,
    require_pyarrow,
    write_manifest,
    write_table,
)
from .metrics import plan_metrics, shard_metric


@dataclass
class ExportSummary:
    folder: Path
    study_id: str
    items: int  # item rows written
    shards: int
    to_score: dict[str, int] = field(default_factory=dict)  # label: items it needs
    current: dict[str, int] = field(default_factory=dict)  # label: items already scored


def shard_name(n: int) -> str:
    return f"items-{n:05d}.parquet"


def _clear(folder: Path) -> None:
    """An export replaces the previous export in its folder, never results."""
    if (folder / MANIFEST).exists():
        read_manifest(folder, "items")  # refuses a results folder
    for old in folder.glob(ITEM_SHARD_GLOB):
        old.unlink()
    (folder / MANIFEST).unlink(missing_ok=True)


def _shardable_metrics(
    planned: list[PlannedMetric], hashes: Hashes, ctx: JobContext
) -> tuple[list[ShardMetric], list[PlannedMetric]]:
    """The metrics prepared for the shards, and their plans; `all` leaves out the rest."""
    metrics, kept = [], []
    for plan in planned:
        try:
            metrics.append(shard_metric(plan, hashes))
            kept.append(plan)
        except InputError as exc:
            if plan.spec.explicit:
                raise
            # `all` means every metric that can be sharded: say which were left out.
            ctx.notice(f"left out: {exc}")
    if not metrics:
        raise InputError("no metric to export: none of those metrics can be sharded")
    return metrics, kept


def _metrics_needed(
    metrics: list[ShardMetric],
    states: list[CacheState],
    items: list[ItemText],
    summary: ExportSummary,
) -> list[list[int]]:
    """Per item, the indexes of the metrics with no current score of it; counted in `summary`."""
    needs: list[list[int]] = [[] for _ in items]
    for m, (entry, state) in enumerate(zip(metrics, states, strict=True)):
        current = state.current
        n = 0
        if current is not None:
            for i, item in enumerate(items):
                if item.id not in current:
                    needs[i].append(m)
                    n += 1
        summary.to_score[entry.label] = n
        summary.current[entry.label] = len(items) - n
    return needs


def _write_item_shards(
    folder: Path,
    items: list[ItemText],
    needs: list[list[int]],
    metrics: list[ShardMetric],
    keys: list[CacheKey],
    digests: dict[str | None, list[str]],
    summary: ExportSummary,
    ctx: JobContext,
    rows_per_shard: int,
) -> None:
    import pyarrow as pa

    todo = [i for i, need in enumerate(needs) if need]
    schema = item_schema()
    for start in range(0, len(todo), rows_per_shard):
        ctx.check()
        chunk = todo[start : start + rows_per_shard]
        columns: dict[str, list[Any]] = {name: [] for name in schema.names}
        for i in chunk:
            item, need = items[i], needs[i]
            columns["item_id"].append(item.id)
            columns["source"].append(item.source)
            columns["output"].append(item.output)
            columns["references"].append(list(item.references))
            columns["system"].append(item.system)
            columns["metrics"].append([metrics[m].label for m in need])
            columns["config_hashes"].append([metrics[m].config_hash for m in need])
            columns["input_hashes"].append([digests[keys[m].mode][i] for m in need])
        write_table(folder / shard_name(summary.shards), pa.table(columns, schema=schema))
        summary.shards += 1
        summary.items += len(chunk)
        ctx.progress(summary.items, len(todo), "Writing shards")


def export_shards(
    study_path: Path,
    folder: Path,
    metric_texts: Sequence[str],
    ctx: JobContext,
    *,
    options: Mapping[str, Any] | None = None,
    rows_per_shard: int = DEFAULT_ROWS,
) -> ExportSummary:
    require_pyarrow()
    if rows_per_shard < 1:
        raise InputError("--rows must be at least 1")
    study = open_existing(study_path)
    try:
        ctx.progress(0, None, "Checking cached scores", force=True)
        given = {**study_options(study), **dict(options or {})}
        planned = plan_metrics(metric_texts, given, registered_models(study))
        if not planned:
            raise InputError("no metric to export: none of those metrics is available")
        study_id = ensure_study_id(study)
        with collector_paused():
            items = load_items(study)
            hashes = Hashes(items)
            metrics, kept = _shardable_metrics(planned, hashes, ctx)
            keys = [hashes.cache_key(p.metric) for p in kept if p.metric is not None]
            digests = {k.mode: hashes.get(k.mode)[1] for k in keys}
            states = check_cache(study, keys, items, digests)
    finally:
        study.close()

    summary = ExportSummary(folder, study_id, 0, 0)
    needs = _metrics_needed(metrics, states, items, summary)
    folder.mkdir(parents=True, exist_ok=True)
    _clear(folder)
    _write_item_shards(folder, items, needs, metrics, keys, digests, summary, ctx, rows_per_shard)
    # Last: a folder with a manifest is a whole export.
    write_manifest(
        folder, Manifest("items", study_id, str(study_path), metrics, items=summary.items)
    )
    return summary
