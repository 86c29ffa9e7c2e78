"""`meaningbench agreement STUDY`: inter-annotator agreement and the human ceiling."""

from __future__ import annotations

import argparse
from typing import Any

from app.commands._common import (
    add_dimension_argument,
    add_json_flag,
    add_study_argument,
    open_existing_study,
    print_json,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "agreement",
        help="inter-annotator agreement: Krippendorff's alpha, ICC, split-half, ceiling",
        description="Agreement of the study's human annotators on one dimension "
        "(regular items only): Krippendorff's alpha (interval), ICC, split-half reliability "
        "with Spearman-Brown, each annotator against the leave-one-out mean, and the human "
        "ceiling a metric's correlation cannot exceed.",
    )
    add_study_argument(parser)
    add_dimension_argument(parser)
    parser.add_argument("--splits", type=int, default=50, help="random split-half splits")
    parser.add_argument("--seed", type=int, default=0)
    add_json_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.analysis.agreement import study_agreement
    from app.analysis.export import to_text
    from app.errors import UserError

    if args.splits < 1:
        raise UserError("--splits must be at least 1")
    with open_existing_study(args.study) as study:
        result = study_agreement(study, args.dimension, n_splits=args.splits, seed=args.seed)
    if args.json:
        print_json({"dimension": args.dimension, **result.to_json()})
        return 0
    if result.n_annotators < 2:
        print(f"{args.dimension}: fewer than two human annotators; agreement is undefined")
    print(to_text(result.summary_frame()))
    if result.loo:
        print()
        print(to_text(result.annotators_frame()))
    if result.reliability_basis:
        print(f"\nceiling = sqrt(reliability), reliability from {result.reliability_basis}")
    return 0
