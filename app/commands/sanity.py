"""`meaningbench sanity STUDY`: identical / unrelated sanity checks of metrics."""

from __future__ import annotations

import argparse
from typing import Any

from meaningbench.commands import _common as common


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "sanity",
        run,
        help="sanity-check metrics on identical and unrelated pairs from the study's sources",
        description="Score (s, s) and (s, unrelated) pairs built from the study's source "
        "sentences and report the pass rates of the MeaningBERT study: identical pairs with "
        "round(value) ≥ 95..99 and = 100, unrelated pairs with round(value) ≤ 5..1 and = 0.",
    )
    parser.add_argument(
        "--metrics",
        nargs="+",
        default=None,
        help="metric names (space or comma separated; default: every config the study ran)",
    )
    parser.add_argument(
        "--unrelated",
        choices=("wordsoup", "sampled"),
        default="wordsoup",
        help="unrelated texts: word soups, or real sentences under the overlap bar",
    )
    parser.add_argument("--n", type=int, default=1000, help="source sentences to use (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.export import to_text
    from meaningbench.analysis.sanity import study_sanity
    from meaningbench.errors import UserError
    from meaningbench.jobs.terminal import run_with_progress_bar

    if args.n < 0:
        raise UserError("--n must be 0 (all) or more")
    with common.open_existing_study(args.study, reading=True) as study:
        names = common.parse_metric_names(args.metrics, study) if args.metrics else None

        def job(ctx: Any) -> Any:
            return study_sanity(
                study,
                names,
                unrelated=args.unrelated,
                n=args.n or None,
                seed=args.seed,
                cancel=ctx.cancel,
                progress=lambda metric, done, total: ctx.progress(done, total, metric),
            )

        table = run_with_progress_bar(job, description="sanity", quiet=args.json)
    if not table.results:
        raise UserError(f"{args.study}: no metric runs; name metrics with --metrics")
    if args.json:
        common.print_json(table.to_json())
        return 0
    print(to_text(table))
    for name, result in table.results.items():
        if result.error:
            print(f"{name}: {result.error}")
        elif result.n_fallback:
            print(f"{name}: {result.n_fallback} sources had no sentence under the overlap bar")
    return 0
