"""`meaningbench recipe csmd-corrected OUTDIR`: CSMD's splits with labels from their raw ratings."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from meaningbench.commands import _common as common

RECIPES = ("csmd-corrected",)


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "recipe",
        run,
        study=False,
        help="build a documented dataset from public files (csmd-corrected)",
        description="csmd-corrected: trace every row of CSMD's published splits to its raw "
        "source row (rebuilding CSMD's label steps and seeded split when all four sources are "
        "given, by normalised text otherwise) and write the splits with label_published, "
        "label_corrected (the mean of the row's own raw ratings), n_ratings, checked and "
        "origin. See resources/docs/audit.md.",
    )
    parser.add_argument("recipe", choices=RECIPES, help="which recipe")
    parser.add_argument("out", type=Path, help="folder to write the splits and summary.json to")
    parser.add_argument(
        "--csmd", type=Path, required=True, help="folder with CSMD's train.tsv and dev.tsv"
    )
    parser.add_argument("--test", type=Path, default=None, help="CSMD's published test.tsv")
    parser.add_argument("--simpda", type=Path, default=None, help="simpDA_2022.csv")
    parser.add_argument(
        "--questeval", type=Path, default=None, help="questeval_likert_ratings_cleaned.csv"
    )
    parser.add_argument("--simplicity-da", type=Path, default=None, help="simplicity_DA.csv")
    parser.add_argument(
        "--asset", type=Path, default=None, help="ASSET human_ratings.csv (CC BY-NC 4.0)"
    )
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.export import to_text
    from meaningbench.datasets.csmd_recipe import build_corrected_csmd, split_files, write_result

    splits = {"train": args.csmd / "train.tsv", "dev": args.csmd / "dev.tsv"}
    if args.test is not None:
        splits["test"] = args.test
    given = {
        "asset": args.asset,
        "simpda": args.simpda,
        "simplicity_da": args.simplicity_da,
        "questeval": args.questeval,
    }
    sources = {k: v for k, v in given.items() if v is not None}
    result = build_corrected_csmd(splits, sources)
    summary = {
        "trace": result.trace,
        "notes": result.notes,
        "by_source": result.by_source.reset_index().to_dict(orient="records"),
        "by_split": result.by_split.reset_index().to_dict(orient="records"),
        "files": [str(p) for p in split_files(result, args.out)],
    }
    write_result(result, args.out, summary)
    if args.json:
        common.print_json(summary)
        return 0
    print(f"csmd-corrected: rows traced by {result.trace}")
    for note in result.notes:
        print(f"  {note}")
    print("\nper source, over all its pairs (published label vs the mean of its own ratings):")
    print(to_text(_percent(result.by_source, ["equal to own mean"])))
    print("\nper split:")
    print(to_text(_percent(result.by_split, ["correct"])))
    print(
        "\nwrote " + ", ".join(str(p) for p in summary["files"]) + f", {args.out / 'summary.json'}"
    )
    return 0


def _percent(frame: Any, columns: list[str]) -> Any:
    out = frame.copy()
    for c in columns:
        out[c] = [f"{100 * v:.1f} %" for v in out[c]]
    return out.round(3)
