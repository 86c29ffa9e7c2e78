"""`meaningbench dataset STUDY FOLDER`: a publishable rating dataset with its card."""

from __future__ import annotations

import argparse
from pathlib import Path

from meaningbench.commands._common import (
    add_json_flag,
    add_study_argument,
    open_existing_study,
    print_json,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dataset",
        help="write the ratings as a dataset: Parquet, spans JSONL and a dataset card",
        description="Write FOLDER/README.md (a dataset card: protocol, instructions, rater "
        "counts, QC pass rates, agreement with confidence intervals), FOLDER/ratings.parquet "
        "(one row per rating of a regular item, loadable with Hugging Face datasets) and, for "
        "esa studies, FOLDER/spans.jsonl. Needs pyarrow (pip install 'meaningbench[parquet]').",
    )
    add_study_argument(parser)
    parser.add_argument("folder", type=Path, help="the folder to write (created if missing)")
    parser.add_argument("--name", default=None, help="the dataset's name (default: the study's)")
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples for the CIs")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.dataset_export import export_dataset

    study = open_existing_study(args.study, reading=True)
    try:
        result = export_dataset(study, args.folder, name=args.name, n_boot=args.boot)
    finally:
        study.close()
    if args.json:
        print_json(
            {
                "folder": str(result.folder),
                "ratings": result.ratings,
                "raters": result.raters,
                "items": result.items,
                "span_ratings": result.span_ratings,
            }
        )
    else:
        print(
            f"wrote {result.ratings:,} ratings of {result.items:,} items by {result.raters} "
            f"named raters to {result.folder}"
        )
    return 0
