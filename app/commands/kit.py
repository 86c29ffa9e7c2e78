"""`meaningbench kit STUDY --raters ana,ben --out DIR`: a rater kit (study file) per rater."""

from __future__ import annotations

import argparse
from pathlib import Path

from meaningbench.commands import _common as common
from meaningbench.core.wording import counted


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
        "of the items still short of their ratings, shared among the raters named, as "
        "NAME-top-up-N.mbkit (the rater's N-th top-up); with --adaptive, the short items "
        "where the ratings collected leave the ranking least settled come first (--items N: "
        "only the first N), so a campaign can run in rounds. A kit already in the folder under a "
        "new kit's name is never replaced when it holds ratings, and otherwise only with "
        "--replace.",
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
    parser.add_argument(
        "--adaptive",
        choices=("metrics", "systems"),
        default=None,
        help="with --top-up: order the short items by the ratings collected so far, where "
        "the ranking of the metrics (the items that most move the unsettled pairs of "
        "metrics) or of the systems (the systems whose means overlap most) is least settled; "
        "the first round is never adaptive (see `meaningbench simulate --rounds`)",
    )
    parser.add_argument(
        "--items",
        type=int,
        default=None,
        metavar="N",
        help="with --top-up: hand out only the first N short items (each to as many raters "
        "as it lacks): the round's size",
    )
    parser.add_argument(
        "--dimension",
        default="meaning",
        help="the human dimension --adaptive reads (default: meaning)",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="replace kits already in the folder under the new kits' names, when they hold "
        "no ratings (a kit with ratings is never replaced)",
    )
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.errors import UserError
    from meaningbench.kits.adaptive import TopUpChoice
    from meaningbench.kits.making import KitsInTheWay, parse_raters
    from meaningbench.ops.kits import make_kits_job

    parse_raters(args.raters)  # bad names are refused before the study is opened
    choice = TopUpChoice(args.adaptive, args.items, args.dimension)
    choice.check()
    if not args.top_up and (args.adaptive is not None or args.items is not None):
        raise UserError("--adaptive and --items choose a top-up's items: add --top-up")
    study = common.open_existing_study(args.study)
    try:
        with common.writing_output(args.out):
            made = common.written(
                make_kits_job(
                    study,
                    args.raters,
                    args.out,
                    top_up=args.top_up,
                    replace=args.replace,
                    choice=choice,
                )
            )
    except KitsInTheWay as exc:
        them = "it" if len(exc.paths) == 1 else "them"
        raise UserError(f"{exc}; --replace replaces {them}, or choose another --out") from None
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
        print(f"{m.path}: kit for {m.rater}, {counted(m.items, 'item')} to rate")
    print(
        f"{counted(len(made), 'kit')} written; send each rater their file, then "
        f"`meaningbench collect {args.study} FOLDER`."
    )
    return 0
