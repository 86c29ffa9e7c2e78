"""`meaningbench kit STUDY --raters ana,ben --out DIR`: a rater kit (study file) per rater."""

from __future__ import annotations

import argparse
from pathlib import Path

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "kit",
        run,
        help="write a rater kit per rater: a small study file with only their queue",
        description="Write one kit per rater into a folder: NAME.mbkit, a study file that "
        "holds only that rater's queue (their share of the items under the study's overlap, "
        "the hidden control items), the practice items, the protocol, guidelines and seed, "
        "and nothing of the other raters, the metric scores (but for the judge scores that pre-fill "
        "error spans, on the kit's items) or the labels. The rater opens "
        "it in MeaningBench, rates, and sends the file back; `meaningbench collect` brings "
        "the ratings in. Each kit is signed for this study: a kit from another study, or "
        "one whose items or ids were edited, is refused when collected. --top-up makes kits "
        "of the items still short of their ratings, shared among the raters named.",
    )
    parser.add_argument(
        "--raters", required=True, metavar="NAMES", help="the raters, separated by commas: ana,ben"
    )
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="the folder for the kits"
    )
    parser.add_argument(
        "--top-up",
        action="store_true",
        help="kits of the items still short of their ratings only (see `meaningbench campaign`)",
    )
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.kits.making import make_kits, parse_raters

    raters = parse_raters(args.raters)
    study = common.open_existing_study(args.study)
    try:
        with common.writing_output(args.out):
            made = make_kits(study, raters, args.out, top_up=args.top_up)
    finally:
        study.close()
    if args.json:
        common.print_json(
            [
                {
                    "rater": m.rater,
                    "file": str(m.path),
                    "kit_id": m.kit_id,
                    "items": m.items,
                    "top_up": m.top_up,
                }
                for m in made
            ]
        )
        return 0
    for m in made:
        print(f"{m.path}: kit for {m.rater}, {m.items} items to rate")
    print(
        f"{len(made)} kits written; send each rater their file, then `meaningbench collect {args.study} FOLDER`."
    )
    return 0
