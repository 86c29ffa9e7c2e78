"""`meaningbench export STUDY OUT`: items with mean ratings and scores, or per-rater ratings."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "export",
        run,
        help="export items (mean ratings, metric scores) or per-rater ratings to CSV/TSV/JSONL",
        description="Export the study's items, one row each, with <dim>_human (the item's "
        "human score: each rater's ratings averaged, then the raters; the aggregate label "
        "where no rater rated — what correlate, report, the dashboard and training use), "
        "<dim>_mean and <dim>_n (the mean over the item's raters and how many), <dim>_label "
        "for aggregate labels published with a dataset, and one column per metric "
        "configuration; or, with --ratings, one row per current rating with its kind, flag and "
        "comment (the long shape, which `meaningbench import` reads back), every label set's "
        "labels unless --labels names one.",
    )
    parser.add_argument("out", type=Path, help="output file: .csv, .tsv or .jsonl")
    parser.add_argument(
        "--ratings", action="store_true", help="one row per rating instead of one per item"
    )
    parser.add_argument(
        "--raw-cells",
        action="store_true",
        help="write CSV/TSV text cells exactly as stored, even those a spreadsheet would run "
        "as formulas (= + - @ tab CR); for programs, not spreadsheets",
    )
    common.add_labels_argument(parser)
    common.add_json_flag(parser)
    parser.epilog = (
        "In CSV/TSV, text cells starting with = + - @, a tab or a carriage return get a "
        "leading ' so that a spreadsheet shows them instead of running them as formulas. "
        "The table stays as it is otherwise: when any cell got a quote, the command says so "
        "on stderr and writes OUT.notice.txt beside the file, and `meaningbench import` "
        "removes the quotes from a file whose notice lies beside it."
    )


def run(args: argparse.Namespace) -> int:
    from meaningbench.datasets.exporters import cells_note, export_format, export_study

    export_format(args.out)  # a bad extension fails before the study is opened
    study = common.open_existing_study(args.study, reading=True)
    try:
        with common.writing_output(args.out):
            report = export_study(
                study,
                args.out,
                ratings=args.ratings,
                raw_cells=args.raw_cells,
                labels=args.labels,
            )
    finally:
        study.close()
    if args.json:
        common.print_json(report.to_dict())
    else:
        print(
            f"wrote {report.rows:,} rows ({report.items:,} items, {report.table}) to {report.path}"
        )
    if report.format != "jsonl":
        # About the file, not the data: stderr, so that stdout stays the result.
        hint = "; --raw-cells writes text as it is" if report.cells_quoted else ""
        print(f"note: text cells: {cells_note(report)}{hint}", file=sys.stderr)
    return 0
