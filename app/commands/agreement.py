"""`meaningbench agreement STUDY`: inter-annotator agreement and the human ceiling."""

from __future__ import annotations

import argparse
from typing import Any

from meaningbench.commands import _common as common


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "agreement",
        run,
        help="inter-annotator agreement: Krippendorff's alpha, ICC, split-half, ceiling",
        description="Agreement of the study's per-rater ratings on one dimension (regular "
        "items only; aggregate labels are no raters): Krippendorff's alpha (interval), ICC, "
        "split-half reliability with Spearman-Brown, each named annotator against the "
        "leave-one-out mean, and the human ceiling a metric's correlation cannot exceed, "
        "with 95%% intervals (ICC(1) from the F distribution, alpha and Spearman-Brown by a "
        "bootstrap over items). Ratings without rater ids (anonymous) get the estimators "
        "that need no rater identity; the output names those left out and why.",
    )
    common.add_dimension_argument(parser)
    parser.add_argument("--splits", type=int, default=50, help="random split-half splits")
    parser.add_argument(
        "--boot", type=int, default=1000, help="bootstrap resamples for the intervals (0: none)"
    )
    parser.add_argument("--seed", type=int, default=0)
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.agreement import study_agreement
    from meaningbench.analysis.export import to_text
    from meaningbench.analysis.metaeval_significance import MAX_RESAMPLES, check_resampling
    from meaningbench.errors import UserError

    if not 1 <= args.splits <= MAX_RESAMPLES:
        raise UserError(f"--splits must lie between 1 and {MAX_RESAMPLES:,}, not {args.splits:,}")
    check_resampling(boot=args.boot, seed=args.seed)
    with common.open_existing_study(args.study, reading=True) as study:
        result = study_agreement(
            study, args.dimension, n_splits=args.splits, seed=args.seed, n_boot=args.boot
        )
    if args.json:
        common.print_json({"dimension": args.dimension, **result.to_json()})
        return 0
    if result.n_ratings == 0 and result.n_aggregate:
        print(
            f"{args.dimension}: only aggregate labels ({result.n_aggregate:,}): a published "
            "mean is no rater, so agreement needs the per-rater ratings behind it"
        )
    elif result.n_annotators < 2 and result.n_anonymous == 0:
        print(f"{args.dimension}: fewer than two raters; agreement is undefined")
    print(to_text(result.summary_frame()))
    if result.loo:
        print()
        print(to_text(result.annotators_frame()))
    if result.not_shown:
        print(
            f"\n{result.n_anonymous:,} ratings have no rater id; not shown, because they need "
            "rater identity:"
        )
        for name, why in result.not_shown.items():
            print(f"  {name}: {why}")
    for name, m in result.machine.items():
        print(
            f"\n{name} [machine]: alpha with it {m['alpha_with']:.3f}, without it "
            f"{m['alpha_without']:.3f} ({int(m['items'])} items; not one of the raters above)"
        )
    if result.reliability_basis:
        print(f"\nceiling = sqrt(reliability), reliability from {result.reliability_basis}")
    return 0
