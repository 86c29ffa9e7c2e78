"""`meaningbench score STUDY --executor ray`: export, score on Ray and merge in one step.

The shards live in a work folder beside the study (`STUDY.shards/`). A run that is killed or
cancelled leaves it there: the next run exports again (the same missing items, since nothing
was merged), keeps the result shards already written, scores only what they lack, and
merges. The folder is removed after a merge that went through.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meaningbench.runtime import JobContext

from .export import ExportSummary, export_shards
from .merge import MergeSummary, merge_results
from .ray_exec import score_on_ray
from .work import plan_work, record_runtime, save_results_manifest


@dataclass
class ClusterScoreSummary:
    exported: ExportSummary
    scored: int  # (item, metric) pairs scored in this run
    already: int  # pairs a killed or cancelled run had scored
    merged: MergeSummary | None


def work_folder(study_path: Path) -> Path:
    return study_path.with_name(f"{study_path.name}.shards")


def score_with_ray(
    study_path: Path,
    metric_texts: Sequence[str],
    ctx: JobContext,
    *,
    options: Mapping[str, Any] | None = None,
    address: str | None = None,
    details: str = "full",
    show_progress: bool = True,
) -> ClusterScoreSummary:
    folder = work_folder(study_path)
    indir, outdir = folder / "items", folder / "results"
    options = dict(options or {})
    exported = export_shards(study_path, indir, metric_texts, ctx, options=options)
    if exported.items == 0:
        shutil.rmtree(folder, ignore_errors=True)
        return ClusterScoreSummary(exported, 0, 0, None)
    work, manifest = plan_work(indir, outdir, ["all"], details)
    for path in work.removed:
        ctx.notice(f"removed {path.name}, left half-written by an earlier run")
    record_runtime(manifest, work, "ray")
    save_results_manifest(outdir, manifest)
    runtime = {k: options[k] for k in ("device", "batch_size") if options.get(k) is not None}
    scored = score_on_ray(work, ctx, address=address, runtime=runtime, show_progress=show_progress)
    merged = merge_results(study_path, outdir, ctx)
    shutil.rmtree(folder, ignore_errors=True)
    return ClusterScoreSummary(exported, scored, sum(work.done.values()), merged)
