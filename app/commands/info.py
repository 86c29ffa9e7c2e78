"""`meaningbench info STUDY`: what a study holds (datasets, items, raters, dimensions, runs)."""

from __future__ import annotations

import argparse

from app.commands._common import add_json_flag, add_study_argument, open_existing_study, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "info",
        help="summarise a study: datasets, items, systems, annotators, dimensions, metric runs",
        description="Summarise a study from counts alone (fast on a million items).",
    )
    add_study_argument(parser)
    add_json_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.datasets.info import study_info

    study = open_existing_study(args.study, reading=True)
    try:
        info = study_info(study)
    finally:
        study.close()
    if args.json:
        print_json(info.to_dict())
    else:
        print("\n".join(info.lines()))
    return 0
