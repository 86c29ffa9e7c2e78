"""`meaningbench practice STUDY`: add practice items with gold, or list raters' results."""

from __future__ import annotations

import argparse
from pathlib import Path

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "practice",
        run,
        help="add practice items with expected ranges, or show raters' practice attempts",
        description="Practice items are rated first by every new rater, who sees after each "
        "whether the score fell in the expected range, and why. They and their answers are "
        "kept apart from the study's items and ratings and never enter any analysis. With "
        "--add, read a CSV with columns source, output, low, high and optionally explanation. "
        "Without it, list each rater's attempts and whether they passed the pass mark "
        "(set with `meaningbench protocol STUDY --practice-pass-mark`).",
    )
    parser.add_argument("--add", type=Path, default=None, metavar="CSV", help="practice items")
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.annotation.practice import practice_results, read_practice_file
    from meaningbench.annotation.protocols import study_protocol
    from meaningbench.ops.practice import add_practice_items

    if args.add is not None:
        rows = read_practice_file(args.add)
        study = common.open_existing_study(args.study)
        try:
            n = common.written(add_practice_items(study, rows))
        finally:
            study.close()
        if args.json:
            common.print_json({"added": n})
        else:
            print(f"added {n:,} practice items from {args.add}")
        return 0
    study = common.open_existing_study(args.study, reading=True)
    try:
        results = practice_results(study)
        choice = study_protocol(study)
    finally:
        study.close()
    if args.json:
        common.print_json([r.__dict__ for r in results])
    else:
        print(f"practice: {choice.practice_line()}")
        print(f"practice results: {len(results)} raters")
        for r in results:
            print(f"  {r.rater}: {r.status}")
    return 0
