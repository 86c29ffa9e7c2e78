"""`meaningbench dataset STUDY FOLDER`: a publishable rating dataset with its card."""

from __future__ import annotations

import argparse
from pathlib import Path

from meaningbench.commands import _common as common
from meaningbench.core.wording import counted


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "dataset",
        run,
        help="write the ratings as a dataset: Parquet, spans JSONL and a dataset card",
        description="Write FOLDER/README.md (a dataset card: protocol, instructions, rater "
        "counts, QC pass rates, agreement with confidence intervals), FOLDER/ratings.parquet "
        "(one row per rating of a regular item, loadable with Hugging Face datasets) and, for "
        "esa studies, FOLDER/spans.jsonl; with --labels SET, also FOLDER/labels.parquet, that "
        "label set's aggregate labels (e.g. a corrected set from `meaningbench audit --fix`). "
        "The files are written beside the folder and moved in together once all are "
        "complete: a failure leaves an earlier dataset there as it was. Needs pyarrow (pip install 'meaningbench[parquet]').",
    )
    parser.add_argument("folder", type=Path, help="the folder to write (created if missing)")
    parser.add_argument("--name", default=None, help="the dataset's name (default: the study's)")
    parser.add_argument(
        "--labels",
        default=None,
        metavar="SET",
        help="also write this aggregate label set's labels (labels.parquet); "
        "`meaningbench audit --fix` makes corrected sets",
    )
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples for the CIs")
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.dataset_export import export_dataset

    study = common.open_existing_study(args.study, reading=True)
    try:
        with common.writing_output(args.folder):
            result = export_dataset(
                study, args.folder, name=args.name, n_boot=args.boot, labels=args.labels
            )
    finally:
        study.close()
    if args.json:
        common.print_json(
            {
                "folder": str(result.folder),
                "ratings": result.ratings,
                "raters": result.raters,
                "items": result.items,
                "span_ratings": result.span_ratings,
                "label_set": result.label_set,
                "labels": result.labels,
            }
        )
    else:
        print(
            f"wrote {counted(result.ratings, 'rating')} of {counted(result.items, 'item')} by "
            f"{counted(result.raters, 'named rater')} to {result.folder}"
        )
        if result.label_set is not None:
            print(f"with {result.labels:,} labels of the label set {result.label_set}")
    return 0
