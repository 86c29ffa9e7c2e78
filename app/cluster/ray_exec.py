"""The Ray executor of `shards score`: `read_parquet → map_batches → write_parquet` per group
of metrics, with Ray Data's own scheduling, progress bars and retries.

CPU metrics run as stateless tasks, a batch of rows per task. A model metric runs in a pool
of actors, each of which builds the metric and loads its model once: one actor per GPU
(`num_gpus=1`) when the cluster has GPUs, else CPU actors of up to CPUS_PER_MODEL_ACTOR
cores, one CPU left to Ray Data's read and write tasks.
Every node needs meaningbench (with the metrics' libraries and models) installed; the shards
must be on a file system every node mounts at the same path. Ctrl+C stops the driver; the
result files already written stay and a second run scores what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from meaningbench.runtime import JobContext

from .layout import EXTRA_HINT, ShardMetric
from .metrics import build_metric
from .scoring import built_metric, score_table
from .work import Work

if TYPE_CHECKING:
    import pyarrow as pa

CPUS_PER_MODEL_ACTOR = 2


def _score_batch(
    batch: pa.Table,
    *,
    entries: Sequence[ShardMetric],
    study_id: str,
    details: str,
    skip: Mapping[str, frozenset[int]],
    runtime: Mapping[str, Any],
) -> pa.Table:
    """A stateless task: a worker process builds each metric once and keeps it."""
    metrics = [built_metric(e, runtime) for e in entries]
    return score_table(batch, entries, metrics, study_id=study_id, details=details, skip=skip)


class ModelScorer:
    """An actor of the pool: the model is loaded once, when the actor starts."""

    def __init__(
        self,
        entries: Sequence[ShardMetric],
        study_id: str,
        details: str,
        skip: Mapping[str, frozenset[int]],
        runtime: Mapping[str, Any],
    ) -> None:
        self.entries = list(entries)
        self.metrics = [build_metric(e, runtime) for e in entries]
        for metric in self.metrics:
            metric.warm_up()
        self.study_id, self.details, self.skip = study_id, details, skip

    def __call__(self, batch: pa.Table) -> pa.Table:
        return score_table(
            batch,
            self.entries,
            self.metrics,
            study_id=self.study_id,
            details=self.details,
            skip=self.skip,
        )


def connect(address: str | None) -> bool:
    """Join the cluster at `address` ("auto": the one this machine belongs to), or start a
    local Ray instance; True when this call started it (and must shut it down)."""
    import logging

    from meaningbench.errors import InputError

    try:
        import ray
    except ImportError:
        raise InputError(f"--executor ray needs Ray: {EXTRA_HINT}") from None
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    else:
        ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    return True


def model_actors() -> tuple[int, float, float]:
    """(actors, GPUs per actor, CPUs per actor) for a model metric on this cluster.

    CPU actors leave one CPU free: Ray Data's read and write tasks need one, and an actor
    pool holding every CPU would wait for them forever.
    """
    import ray

    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    if gpus:
        return gpus, 1.0, 1.0
    spare = max(1, int(resources.get("CPU", 1)) - 1)
    per = min(spare, CPUS_PER_MODEL_ACTOR)
    return max(1, spare // per), 0.0, float(per)


def score_on_ray(
    work: Work,
    ctx: JobContext,
    *,
    address: str | None = None,
    runtime: Mapping[str, Any] | None = None,
    rows: int | None = None,
    show_progress: bool = True,
) -> int:
    """Score every pending pair on Ray; returns the result rows written. Progress is Ray
    Data's own bars, one per operator (read, score, write), on stderr."""
    started = connect(address)
    import ray
    import ray.data

    ray.data.DataContext.get_current().enable_progress_bars = show_progress

    try:
        written = 0
        total = work.total_pending
        for n, group in enumerate(work.groups):
            ctx.check()
            ctx.progress(written, total, group.name, force=True)
            batch_size = group.rows_per_batch(rows)
            # Blocks of one batch each: a shard is read as one block, and a block is one
            # task's work, so large shards would otherwise leave CPUs idle.
            ds = ray.data.read_parquet([str(p) for p in group.files]).repartition(
                target_num_rows_per_block=batch_size
            )
            common: dict[str, Any] = {
                "study_id": work.exported.study_id,
                "details": work.details,
                "skip": group.skip,
                "runtime": dict(runtime or {}),
            }
            if group.uses_model:
                actors, gpus, cpus = model_actors()
                ds = ds.map_batches(
                    ModelScorer,
                    fn_constructor_kwargs={"entries": group.entries, **common},
                    batch_size=batch_size,
                    batch_format="pyarrow",
                    compute=ray.data.ActorPoolStrategy(size=actors),
                    num_gpus=gpus,
                    num_cpus=cpus,
                )
            else:
                ds = ds.map_batches(
                    partial(_score_batch, entries=group.entries, **common),
                    batch_size=batch_size,
                    batch_format="pyarrow",
                    num_cpus=1,
                )
            ds.write_parquet(str(work.outdir / f"ray-{work.run_tag}-{n}-{group.name}"))
            written += group.pending
            ctx.progress(written, total, group.name, force=True)
        return written
    finally:
        if started:
            ray.shutdown()
