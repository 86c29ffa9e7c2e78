"""`meaningbench shards export|score|merge`: score a study's missing items elsewhere (on a Ray
cluster, or another machine) as Parquet shards, and merge the results back exactly once.

Needs the optional extra: `pip install 'meaningbench[cluster]'` (pyarrow, Ray Data).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common

EXECUTORS = ("local", "ray")
DETAILS_CHOICES = ("full", "compact", "none")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "shards",
        help="score a study on a Ray cluster or another machine: export Parquet shards, "
        "score them, merge the results back",
        description="Score beyond one machine. `export` writes the items still missing "
        "scores as Parquet shards, `score` scores shards (here or on a Ray cluster), `merge` "
        "checks every result and writes them into the study in one transaction; merging "
        "again adds nothing. Needs `pip install 'meaningbench[cluster]'`.",
    )
    sub = parser.add_subparsers(dest="shards_command", metavar="STEP", required=True)
    _register_export(sub)
    _register_score(sub)
    _register_merge(sub)


def _register_export(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export",
        help="write the items still missing scores for METRICS as Parquet shards",
        description="Write the items of STUDY that still miss a current score for one of the "
        "metrics as Parquet shards in OUTDIR (replacing an earlier export there).",
    )
    common.add_study_argument(export)
    export.add_argument("outdir", type=Path, help="folder for the shards")
    _metrics_argument(export)
    export.add_argument("--rows", type=int, default=None, help="items per shard (default: 50,000)")
    export.add_argument(
        "--reference-mode",
        choices=("source", "references"),
        default=None,
        help="what reference-based metrics compare with (as in `meaningbench score`)",
    )
    common.add_json_flag(export)
    export.set_defaults(func=run_export)


def _register_score(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    score = sub.add_parser(
        "score",
        help="score exported shards into result shards, here or on Ray",
        description="Score the shards in INDIR into result shards in OUTDIR. A second run "
        "scores only what OUTDIR lacks (after a kill or Ctrl+C).",
    )
    score.add_argument("indir", type=Path, help="a folder written by `shards export`")
    score.add_argument("outdir", type=Path, help="folder for the result shards")
    _metrics_argument(score, default="all")
    score.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local: in this process; ray: on a Ray cluster (default: local)",
    )
    _address_argument(score)
    score.add_argument(
        "--details",
        choices=DETAILS_CHOICES,
        default="full",
        help="per-item details to keep: full, compact (top-level numbers only) or none",
    )
    score.add_argument(
        "--batch-rows",
        type=int,
        default=None,
        help="rows per batch (default: 500 for CPU metrics, 2,048 for model metrics)",
    )
    score.add_argument("--device", default=None, help="for model metrics (default: auto)")
    score.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_json_flag(score)
    score.set_defaults(func=run_score)


def _register_merge(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    merge = sub.add_parser(
        "merge",
        help="check every result shard and write the scores into the study",
        description="Check every row of the result shards in OUTDIR (study id, config hash, "
        "item, input hash), then write the scores into STUDY in one transaction; any problem "
        "refuses the whole merge, and so do results the export asked for that are missing "
        "(unless --allow-missing). Scores already current in the study are left alone.",
    )
    common.add_study_argument(merge)
    merge.add_argument("outdir", type=Path, help="a folder written by `shards score`")
    merge.add_argument(
        "--allow-missing",
        action="store_true",
        help="merge the results there are when some that the export asked for are missing "
        "(a lost file); each incomplete metric's run is marked interrupted, and "
        "`meaningbench score` completes it (default: refuse, naming what is missing)",
    )
    common.add_json_flag(merge)
    merge.set_defaults(func=run_merge)


def _metrics_argument(parser: argparse.ArgumentParser, default: str | None = None) -> None:
    parser.add_argument(
        "--metrics",
        nargs="+",
        required=default is None,
        default=[default] if default else None,
        metavar="SPEC",
        help="metric specs, e.g. bleu sari bertscore (or comma-separated; see "
        "`meaningbench metrics`)"
        + ("" if default is None else f" (default: {default}: every exported metric)"),
    )


def _address_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--address",
        default=None,
        help="the Ray cluster to join (auto: the one this machine is part of; default: "
        "start a local Ray instance)",
    )


def run_export(args: argparse.Namespace) -> int:
    from meaningbench.commands._common import open_existing_study
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.ops.shards import export_shards_job

    open_existing_study(args.study).close()
    options = {"reference_mode": args.reference_mode} if args.reference_mode else {}
    summary = run_with_progress_bar(
        export_shards_job(
            args.study, args.outdir, args.metrics, options=options, rows_per_shard=args.rows or None
        ),
        description="Exporting",
        quiet=args.json,
    ).value
    if args.json:
        common.print_json(
            {
                "folder": str(summary.folder),
                "study_id": summary.study_id,
                "items": summary.items,
                "shards": summary.shards,
                "to_score": summary.to_score,
                "current": summary.current,
            }
        )
        return 0
    print(f"{summary.items:,} items in {summary.shards} shard(s) in {summary.folder}")
    for label, n in summary.to_score.items():
        print(f"  {label}: {n:,} to score, {summary.current[label]:,} already current")
    return 0


def run_score(args: argparse.Namespace) -> int:
    from meaningbench.cluster.work import plan_work
    from meaningbench.errors import InputError
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.ops.shards import score_shards_job

    if args.batch_rows is not None and args.batch_rows < 1:
        raise InputError("--batch-rows must be at least 1")
    work, manifest = plan_work(args.indir, args.outdir, args.metrics, args.details)
    for path in work.removed:
        print(f"note: removed {path}, left half-written by an earlier run", file=sys.stderr)
    job = score_shards_job(
        work,
        manifest,
        executor=args.executor,
        device=args.device,
        address=args.address,
        rows=args.batch_rows,
        show_progress=not (args.quiet or args.json),
    )
    # On Ray, Ray Data's own progress bars show the work.
    quiet = args.quiet or args.json or args.executor == "ray"
    scored = run_with_progress_bar(job, description="Scoring", quiet=quiet)
    already = sum(work.done.values())
    if args.json:
        common.print_json(
            {
                "outdir": str(args.outdir),
                "executor": args.executor,
                "scored": scored,
                "already_scored": already,
                "pending": work.pending,
                "done_before": work.done,
            }
        )
    else:
        print(
            f"{scored:,} scores written to {args.outdir}"
            + (f" ({already:,} were there from an earlier run)" if already else "")
        )
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from meaningbench.commands._common import open_existing_study
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.ops.shards import merge_shards_job

    open_existing_study(args.study).close()
    summary = run_with_progress_bar(
        merge_shards_job(args.study, args.outdir, allow_missing=args.allow_missing),
        description="Merging",
        quiet=args.json,
    ).value
    if args.json:
        common.print_json(
            {
                "study": str(args.study),
                "files": summary.files,
                "rows": summary.rows,
                "metrics": [vars(m) for m in summary.metrics],
            }
        )
        return 0
    print(f"{summary.rows:,} results in {summary.files} file(s) checked")
    _print_merged(summary.metrics)
    return 0


def _print_merged(metrics: list[Any]) -> None:
    from meaningbench.cluster.merge import describe_nonfinite

    for m in metrics:
        line = f"  {m.label}: {m.written:,} written, {m.current:,} already current"
        if m.failed:
            line += f", {m.failed:,} with errors"
        if m.missing:
            line += f", {m.missing:,} missing (its run is marked interrupted)"
        print(line)
        if m.nonfinite:
            print(f"    {describe_nonfinite(m.nonfinite)}")


def report_cluster_score(args: argparse.Namespace, options: dict[str, Any]) -> int:
    """`meaningbench score --executor ray`: the three steps in one."""
    from meaningbench.cluster.pipeline import work_folder
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.ops.shards import score_with_ray_job

    options = {k: v for k, v in options.items() if k != "workers"}
    summary = run_with_progress_bar(
        score_with_ray_job(
            args.study,
            [args.metrics],
            options=options,
            address=args.address,
            show_progress=not (args.quiet or args.json),
        ),
        description="Exporting and merging",
        quiet=args.quiet or args.json,
    ).value
    merged = summary.merged.metrics if summary.merged else []
    if args.json:
        common.print_json(
            {
                "study": str(args.study),
                "executor": "ray",
                "exported_items": summary.exported.items,
                "scored": summary.scored,
                "already_scored": summary.already,
                "metrics": [vars(m) for m in merged],
                "current_before": summary.exported.current,
            }
        )
        return 0
    if summary.merged is None:
        print("every score is current; nothing to do")
        return 0
    print(
        f"{summary.exported.items:,} items scored on Ray"
        + (f" ({summary.already:,} scores kept from an interrupted run)" if summary.already else "")
        + f"; work folder {work_folder(args.study)} removed"
    )
    _print_merged(merged)
    return 0
