"""`meaningbench report STUDY OUT.html`: the whole study as one self-contained HTML file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common
from meaningbench.commands.metaeval import add_grouping_argument


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "report",
        run,
        help="write a self-contained HTML report: correlations, which metric, sanity, agreement, QC",
        description="Write the study summary, the correlation table with its charts, the "
        "sanity checks (MeaningBERT layout), agreement and rater QC as one HTML file with "
        "inline SVG charts and no external assets.",
    )
    parser.add_argument("out", type=Path, help="the HTML file to write")
    common.add_dimension_argument(parser)
    common.add_labels_argument(parser)
    parser.add_argument("--z", action="store_true", help="correlate with per-annotator z-scores")
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples (0: none)")
    parser.add_argument("--groups", choices=("items", "sources"), default="items")
    parser.add_argument("--seed", type=int, default=0)
    add_grouping_argument(parser)
    parser.add_argument(
        "--by",
        default=None,
        metavar="ATTR",
        help='"Which metric" per value of this item attribute too',
    )
    parser.add_argument(
        "--no-sanity", action="store_true", help="leave the sanity checks out (they run metrics)"
    )
    parser.add_argument(
        "--sanity-metrics",
        nargs="+",
        default=None,
        help="metrics to sanity-check (default: every config the study ran)",
    )
    parser.add_argument("--sanity-n", type=int, default=200, help="sources for sanity checks")
    parser.add_argument("--unrelated", choices=("wordsoup", "sampled"), default="wordsoup")
    parser.add_argument(
        "--simulate-selection",
        type=int,
        default=0,
        metavar="SEEDS",
        help='add "Rating fewer items": the selection strategies replayed on the ratings '
        "with this many seeds (see `meaningbench simulate`; default 0: left out)",
    )


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.metaeval_significance import check_resampling
    from meaningbench.analysis.report import build_report, write_report
    from meaningbench.analysis.selection_sim import MAX_SEEDS
    from meaningbench.errors import UserError
    from meaningbench.jobs.terminal import run_with_progress_bar

    check_resampling(boot=args.boot, seed=args.seed)
    if args.sanity_n < 1:
        raise UserError(f"--sanity-n must be at least 1, not {args.sanity_n:,}")
    if not 0 <= args.simulate_selection <= MAX_SEEDS:
        raise UserError(
            f"--simulate-selection must lie between 0 and {MAX_SEEDS:,}, "
            f"not {args.simulate_selection:,}"
        )
    if args.out.parent and not args.out.parent.exists():
        raise UserError(f"{args.out.parent}: no such folder")
    with common.open_existing_study(args.study, reading=True) as study:
        metrics = (
            common.parse_metric_names(args.sanity_metrics, study) if args.sanity_metrics else None
        )

        def job(ctx: Any) -> Any:
            ctx.progress(0, None, "computing", force=True)
            return build_report(
                study,
                dimension=args.dimension,
                z=args.z,
                n_boot=args.boot,
                seed=args.seed,
                groups=args.groups,
                sanity=not args.no_sanity,
                sanity_metrics=metrics,
                sanity_n=args.sanity_n,
                unrelated=args.unrelated,
                cancel=ctx.cancel,
                labels=args.labels,
                group_by=args.group_by,
                by=args.by,
                selection_seeds=args.simulate_selection,
            )

        data = run_with_progress_bar(job, description="report", quiet=True)
    with common.writing_output(args.out):
        path = write_report(data, args.out)
    print(f"wrote {path}")
    return 0
