"""`meaningbench qc STUDY`: rater quality control from the hidden control items."""

from __future__ import annotations

import argparse
from typing import Any

from meaningbench.commands import _common as common


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "qc",
        run,
        help="rater quality control: Appraise's degraded-item test, control means, timing",
        description="Per annotator: Appraise's reliability test (z-scores, degraded items "
        "paired with their originals, one-sided Mann-Whitney U, p < 0.05 passes), mean "
        "ratings of identical and unrelated controls, repeat consistency, median time per "
        "item and the share of very fast ratings.",
    )
    common.add_dimension_argument(parser)
    parser.add_argument(
        "--fast-ms", type=int, default=2000, help="a rating faster than this is 'very fast'"
    )
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.export import to_text
    from meaningbench.analysis.qc import study_qc

    with common.open_existing_study(args.study, reading=True) as study:
        result = study_qc(study, args.dimension, fast_ms=args.fast_ms)
    if args.json:
        common.print_json(result.to_json())
        return 0
    if not result.raters:
        print(f"{args.dimension}: no human ratings")
        return 0
    print(to_text(result.to_frame()))
    return 0
