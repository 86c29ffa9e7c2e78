"""`meaningbench spans export|import`: error span ratings as JSON Lines."""

from __future__ import annotations

import argparse
from pathlib import Path

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "spans",
        help="export or import error span ratings (esa) as JSON Lines",
        description="Error span ratings as JSON Lines, one line per rater and item: dataset, "
        "system, source, output, rater, dimension, score and spans (side, start, end — "
        "character offsets, end exclusive —, severity minor|major, and the text they cover). "
        "An exported file imports into another study with the same items, and a file of the "
        "export's shape comes out of import and export unchanged.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser("export", help="write every current span rating to a file")
    common.add_study_argument(export)
    export.add_argument("out", type=Path, help="the .jsonl file to write")
    export.add_argument(
        "--dimension", default=None, help="the score's dimension (default: the first active)"
    )
    common.add_json_flag(export)
    export.set_defaults(func=run_export)
    imp = actions.add_parser("import", help="read span ratings into the study (all or nothing)")
    common.add_study_argument(imp)
    imp.add_argument("file", type=Path, help="a .jsonl file of span ratings")
    common.add_json_flag(imp)
    imp.set_defaults(func=run_import)


def run_export(args: argparse.Namespace) -> int:
    from meaningbench.annotation.span_io import export_spans

    study = common.open_existing_study(args.study, reading=True)
    try:
        with common.writing_output(args.out):
            n = export_spans(study, args.out, args.dimension)
    finally:
        study.close()
    if args.json:
        common.print_json({"ratings": n, "path": str(args.out)})
    else:
        print(f"wrote {n:,} span ratings to {args.out}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from meaningbench.ops.spans import import_spans_job

    study = common.open_existing_study(args.study)
    try:
        result = common.written(import_spans_job(study, args.file))
    finally:
        study.close()
    if args.json:
        common.print_json({"ratings": result.ratings, "spans": result.spans})
    else:
        print(f"imported {result.ratings:,} span ratings ({result.spans:,} spans) from {args.file}")
    return 0
