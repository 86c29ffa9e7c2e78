"""What `shards score` still has to do: the exported (item, metric) pairs that no complete
result shard holds yet.

Result shards are only ever added, each written whole or not at all as far as a reader can
tell: a file a killed run left half-written has no Parquet footer, cannot be read, and is
removed here before anything is scored. So a run that was killed, or cancelled with Ctrl+C,
and started again scores exactly the pairs that are missing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from meaningbench.errors import InputError

from .details import DETAILS_MODES
from .layout import (
    ITEM_SHARD_GLOB,
    MANIFEST,
    Manifest,
    ShardMetric,
    read_manifest,
    require_pyarrow,
    result_files,
    write_manifest,
)
from .metrics import MODEL_ROWS, TASK_ROWS, select_metrics


@dataclass
class Group:
    """Metrics scored together in one pass over the shards: every CPU metric in one stateless
    task per batch, or one model metric in its actor pool."""

    name: str
    entries: list[ShardMetric]
    files: list[Path]
    skip: dict[str, frozenset[int]]
    pending: int  # (item, metric) pairs to score

    @property
    def uses_model(self) -> bool:
        return any(e.batches_itself for e in self.entries)

    def rows_per_batch(self, override: int | None = None) -> int:
        if override is not None:
            return override
        return MODEL_ROWS if self.uses_model else TASK_ROWS


@dataclass
class Work:
    indir: Path
    outdir: Path
    exported: Manifest
    details: str
    groups: list[Group]
    done: dict[str, int] = field(default_factory=dict)  # label: pairs already in results
    pending: dict[str, int] = field(default_factory=dict)  # label: pairs to score
    removed: list[Path] = field(default_factory=list)  # half-written result shards
    run_tag: str = field(default_factory=lambda: time.strftime("%Y%m%d-%H%M%S"))

    @property
    def total_pending(self) -> int:
        return sum(self.pending.values())


def slug(label: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in label).strip("-") or "metric"


def _results_manifest(
    outdir: Path, exported: Manifest, chosen: list[ShardMetric], details: str
) -> Manifest:
    """The results folder's manifest, made on its first run; later runs must match it."""
    if not (outdir / MANIFEST).exists():
        manifest = Manifest("results", exported.study_id, exported.study, [], details=details)
    else:
        manifest = read_manifest(outdir, "results")
        if manifest.study_id != exported.study_id:
            raise InputError(
                f"{outdir}: holds results for another study ({manifest.study}); "
                "score into a new folder"
            )
        if manifest.details != details:
            raise InputError(
                f"{outdir}: its results were scored with --details {manifest.details}; "
                f"use that, or a new folder for --details {details}"
            )
    for entry in chosen:
        had = manifest.metric(entry.label)
        if had is None:
            manifest.metrics.append(entry)
        elif had.config_hash != entry.config_hash:
            raise InputError(
                f"{outdir}: holds {entry.label} with config hash {had.config_hash}, these "
                f"shards have {entry.config_hash}; score into a new folder"
            )
    return manifest


def plan_work(
    indir: Path, outdir: Path, metric_texts: Sequence[str], details: str
) -> tuple[Work, Manifest]:
    """What is left to score, and the results manifest (written by the caller before any
    result shard, so a results folder always says what it holds)."""
    require_pyarrow()
    import pyarrow.parquet as pq

    if details not in DETAILS_MODES:
        raise InputError(f"--details must be one of {', '.join(DETAILS_MODES)}, not {details!r}")
    exported = read_manifest(indir, "items")
    chosen = select_metrics(metric_texts, exported.metrics)
    manifest = _results_manifest(outdir, exported, chosen, details)
    work = Work(indir, outdir, exported, details, [])

    done: dict[str, set[int]] = {e.label: set() for e in chosen}
    if outdir.exists():
        for path in result_files(outdir):
            try:
                table = pq.read_table(path, columns=["item_id", "metric"])
            except Exception:  # no footer: a run was killed while writing it
                path.unlink(missing_ok=True)
                work.removed.append(path)
                continue
            for item_id, label in zip(
                table.column("item_id").to_pylist(), table.column("metric").to_pylist(), strict=True
            ):
                if label in done:
                    done[label].add(item_id)
    files: dict[str, list[Path]] = {e.label: [] for e in chosen}
    done_in: dict[tuple[str, Path], set[int]] = {}  # (label, file): ids already scored
    for label in done:
        work.done[label] = 0
        work.pending[label] = 0
    item_rows = 0
    for path in sorted(indir.glob(ITEM_SHARD_GLOB)):
        table = pq.read_table(path, columns=["item_id", "metrics"])
        ids = table.column("item_id").to_pylist()
        item_rows += len(ids)
        for item_id, labels in zip(ids, table.column("metrics").to_pylist(), strict=True):
            for label in labels:
                if label not in done:
                    continue
                if item_id in done[label]:
                    work.done[label] += 1
                    done_in.setdefault((label, path), set()).add(item_id)
                else:
                    work.pending[label] += 1
                    if not files[label] or files[label][-1] != path:
                        files[label].append(path)

    if item_rows != exported.items:
        raise InputError(
            f"{indir}: its item shards hold {item_rows:,} items, its {MANIFEST} says "
            f"{exported.items:,}: a shard is missing or was changed; export again"
        )
    # What a merge of these results must find (it refuses results that lack some).
    manifest.export = str(indir.resolve())
    for label in done:
        manifest.expected[label] = work.done[label] + work.pending[label]

    def group(name: str, entries: list[ShardMetric]) -> None:
        pending = sum(work.pending[e.label] for e in entries)
        if not pending:
            return
        paths = sorted({p for e in entries for p in files[e.label]})
        # Only the ids already scored inside the files this group reads travel with its tasks.
        skip = {
            e.label: frozenset(i for p in paths for i in done_in.get((e.label, p), ()))
            for e in entries
        }
        work.groups.append(Group(name, entries, paths, skip, pending))

    group("cpu", [e for e in chosen if not e.batches_itself])
    for entry in chosen:
        if entry.batches_itself:
            group(slug(entry.label), [entry])
    outdir.mkdir(parents=True, exist_ok=True)
    return work, manifest


def save_results_manifest(outdir: Path, manifest: Manifest) -> None:
    write_manifest(outdir, manifest)


def record_runtime(manifest: Manifest, work: Work, device: str | None) -> None:
    """Note in the results manifest the library versions behind each metric's scores and
    where model metrics ran; the merge files them with the runs."""
    from dataclasses import replace

    from .metrics import build_metric

    scored = {e.label for g in work.groups for e in g.entries}
    for n, entry in enumerate(manifest.metrics):
        if entry.label in scored:
            versions = dict(build_metric(entry).versions())
            manifest.metrics[n] = replace(
                entry, versions=versions, device=device if entry.batches_itself else None
            )
