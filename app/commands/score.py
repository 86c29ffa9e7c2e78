"""`meaningbench score STUDY`: run the metric battery over a study's items.

Only what is missing or stale is computed (scores are cached by metric, config and item
texts); Ctrl+C stops after the current batch and keeps what was written, and running the
command again resumes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from meaningbench.commands import _common as common
from meaningbench.settings import DEVICE_CHOICES

REFERENCE_MODES = ("source", "references")
# Ctrl+C ends the command within this many seconds, wherever it lands (see
# meaningbench.interrupts); a clean stop takes well under a second on an idle machine.
STOP_LIMIT_S = 4.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "score",
        run,
        help="run metrics over a study's items (only missing or stale scores are computed)",
        description="Score a study's items with the metric battery. Scores are cached per "
        "metric, config and item texts, so a second run computes only what changed; an "
        "interrupted run resumes.",
    )
    parser.add_argument(
        "--metrics",
        default="all",
        help="'all' (every available metric and every registered model; the default) or a "
        "comma-separated list, e.g. bleu,sari,bleu[lowercase],meaningbert@MODEL "
        "(see `meaningbench metrics`)",
    )
    parser.add_argument(
        "--reference-mode",
        choices=REFERENCE_MODES,
        default=None,
        help="compare reference-based metrics with the source (default) or with the items' "
        "human references (items without references fall back to the source)",
    )
    parser.add_argument("--device", choices=DEVICE_CHOICES, default=None, help="for neural metrics")
    parser.add_argument("--model", default=None, help="model id or local folder for neural metrics")
    parser.add_argument("--batch-size", type=int, default=None, help="for neural metrics")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes for large runs of CPU-bound metrics (default: one per core; "
        "1 = none)",
    )
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: this machine (default); ray: export shards, score them on a Ray cluster "
        "and merge them (needs `pip install 'meaningbench[cluster]'`; see `meaningbench shards`)",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="with --executor ray: the cluster to join (auto: the one this machine is part "
        "of; default: a local Ray instance)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_json_flag(parser)


def options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    options = {
        "reference_mode": args.reference_mode,
        "device": args.device,
        "model": args.model,
        "batch_size": args.batch_size,
        "workers": getattr(args, "workers", None),
    }
    return {k: v for k, v in options.items() if v is not None}


def _exit_code(statuses: list[str]) -> int:
    if "cancelled" in statuses:
        return 130
    if any(s in ("failed", "unavailable") for s in statuses):
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    from meaningbench.errors import InputError
    from meaningbench.interrupts import interrupted, stop_within

    stop_within(STOP_LIMIT_S)
    from meaningbench.jobs.scoring import ScoreRequest, validate_request
    from meaningbench.jobs.terminal import run_with_progress_bar
    from meaningbench.ops.score import score_job

    if args.batch_size is not None and args.batch_size < 1:
        raise InputError("--batch-size must be at least 1")
    if args.workers is not None and args.workers < 1:
        raise InputError("--workers must be at least 1")
    common.open_existing_study(args.study).close()  # a clear message for a missing or foreign file
    request = ScoreRequest(
        study_path=args.study, metrics=[args.metrics], options=options_from_args(args)
    )
    validate_request(request)
    if args.executor == "ray":
        from meaningbench.commands.shards import report_cluster_score

        return report_cluster_score(args, options_from_args(args))
    summaries = run_with_progress_bar(
        lambda ctx: score_job(ctx, request.study_path, request.metrics, request.options).value,
        description="Scoring",
        quiet=args.quiet or args.json,
    )
    code = _exit_code([s.status for s in summaries])
    if interrupted():
        code = 130  # Ctrl+C came too late to stop anything: still, the user stopped it
    if args.json:
        common.print_json({"study": str(args.study), "runs": [s.to_dict() for s in summaries]})
    else:
        _print_table(summaries)
    if code == 130:
        print("meaningbench score: cancelled; finished work was kept", file=sys.stderr)
    return code


def _print_table(summaries: list[Any]) -> None:
    if not summaries:
        print("no metric to run")
        return
    width = max(len(s.label) for s in summaries)
    print(
        f"{'metric':<{width}}  {'status':<11} {'scored':>8} {'cached':>8} {'failed':>7} {'time':>8}"
    )
    for s in summaries:
        line = (
            f"{s.label:<{width}}  {s.status:<11} {s.scored:>8,} {s.cached:>8,} {s.failed:>7,} "
            f"{s.elapsed_s:>7.1f}s"
        )
        if s.error:
            line += f"  {s.error}"
        print(line)
