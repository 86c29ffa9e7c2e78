"""Scoring beyond one machine (`meaningbench shards`, and `meaningbench score --executor
ray`): export the items still missing scores as Parquet shards, score the shards here or on
a Ray cluster, merge the results back. The work is `meaningbench.cluster`'s; these are its
jobs.

Of the four, the export writes the study (its id, made by the first export) and so do the
merges; scoring shards writes result shards only. No screen starts them yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.cluster.export import ExportSummary
    from meaningbench.cluster.layout import Manifest
    from meaningbench.cluster.merge import MergeSummary
    from meaningbench.cluster.pipeline import ClusterScoreSummary
    from meaningbench.cluster.work import Work

__all__ = [
    "ClusterScoreSummary",
    "ExportSummary",
    "MergeSummary",
    "export_shards_job",
    "merge_shards_job",
    "score_shards_job",
    "score_with_ray_job",
]

Executor = Literal["local", "ray"]


def export_shards_job(
    study_path: Path,
    folder: Path,
    metrics: Sequence[str],
    *,
    options: Mapping[str, Any] | None = None,
    rows_per_shard: int | None = None,
) -> Job[Wrote[ExportSummary]]:
    """Write the items of the study still missing a current score for one of `metrics` as
    shards in `folder` (an earlier export there is replaced); the job's value says how
    many. The study gets its id if it has none."""

    def run(ctx: JobContext) -> Wrote[ExportSummary]:
        from meaningbench.cluster.export import export_shards
        from meaningbench.cluster.layout import DEFAULT_ROWS

        summary = export_shards(
            study_path,
            folder,
            metrics,
            ctx,
            options=options,
            rows_per_shard=DEFAULT_ROWS if rows_per_shard is None else rows_per_shard,
        )
        # The id is a study setting, made once: whether this export made it is not told.
        return Wrote(summary, StudyChanges(settings=True))

    return run


def score_shards_job(
    work: Work,
    manifest: Manifest,
    *,
    executor: Executor = "local",
    device: str | None = None,
    address: str | None = None,
    rows: int | None = None,
    show_progress: bool = True,
) -> Job[int]:
    """Score the pairs `work` has pending (`meaningbench.cluster.work.plan_work`) into its
    result folder, in this process or on the Ray cluster at `address` (None: a local Ray
    instance started for the job); the job's value is the result rows written. The results'
    manifest, which names where they were scored, is saved first. Writes no study.

    `show_progress`: Ray Data's own progress bars, on stderr (the Ray executor only)."""

    def run(ctx: JobContext) -> int:
        from meaningbench.cluster.work import record_runtime, save_results_manifest

        runtime = {"device": device} if device else {}
        if executor == "ray":
            from meaningbench.cluster.ray_exec import score_on_ray

            record_runtime(manifest, work, "ray")
            save_results_manifest(work.outdir, manifest)
            return score_on_ray(
                work,
                ctx,
                address=address,
                runtime=runtime,
                rows=rows,
                show_progress=show_progress,
            )
        from meaningbench.cluster.local_exec import score_here

        record_runtime(manifest, work, device or "auto")
        save_results_manifest(work.outdir, manifest)
        return score_here(work, ctx, runtime=runtime, rows=rows)

    return run


def merge_shards_job(
    study_path: Path, outdir: Path, *, allow_missing: bool = False
) -> Job[Wrote[MergeSummary]]:
    """Check every result shard in `outdir`, then write their scores into the study in one
    transaction (any problem refuses the whole merge); the job's value says what each
    metric got. Scores already current are left alone, so merging again adds nothing."""

    def run(ctx: JobContext) -> Wrote[MergeSummary]:
        from meaningbench.cluster.merge import merge_results

        summary = merge_results(study_path, outdir, ctx, allow_missing=allow_missing)
        return Wrote(summary, _merged(summary))

    return run


def score_with_ray_job(
    study_path: Path,
    metrics: Sequence[str],
    *,
    options: Mapping[str, Any] | None = None,
    address: str | None = None,
    show_progress: bool = True,
) -> Job[Wrote[ClusterScoreSummary]]:
    """Export, score on Ray and merge in one step, in a work folder beside the study that
    is removed once merged (`meaningbench.cluster.pipeline`)."""

    def run(ctx: JobContext) -> Wrote[ClusterScoreSummary]:
        from meaningbench.cluster.pipeline import score_with_ray

        summary = score_with_ray(
            study_path,
            metrics,
            ctx,
            options=options,
            address=address,
            show_progress=show_progress,
        )
        changes = _merged(summary.merged) if summary.merged else StudyChanges()
        return Wrote(summary, changes | StudyChanges(settings=True))

    return run


def _merged(summary: MergeSummary) -> StudyChanges:
    # The summary counts the scores written by metric, without their items: a merge that
    # wrote any is a wholesale change, and its runs are new.
    wrote = any(m.written for m in summary.metrics)
    return StudyChanges(runs=True, everything=True) if wrote else StudyChanges()
