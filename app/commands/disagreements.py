"""`meaningbench disagreements STUDY`: the items whose raters differ most, and settling them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from meaningbench.commands import _common as common
from meaningbench.errors import UserError

if TYPE_CHECKING:
    from meaningbench.analysis.disagreements import Disagreement, DisagreementReport
    from meaningbench.analysis.resolutions import Decision

TEXT_WIDTH = 160  # characters of a source or output shown; --json has them whole


def register(subparsers: Any) -> None:
    parser = common.add_command(
        subparsers,
        "disagreements",
        run,
        help="items whose human raters differ by more than a threshold; settle them",
        description="Lists the regular items whose human raters' ratings differ by more than "
        "a threshold (default: the study's own 95th percentile of the gaps between two raters "
        "on one item), largest gap first, with each rater's rating and error spans. A machine "
        "rater (the judge) and published labels are not raters here. With --resolve ITEM, "
        "settle one item: --score S (an adjudicated score), --keep-all (the raters' mean "
        "stands) or --exclude (left out). Decisions go to their own label set (default "
        "'resolved'), never over the ratings; analyses use them with --labels resolved.",
    )
    common.add_dimension_argument(parser)
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="N",
        help="list items whose raters differ by more than N points "
        "(default: the study's 95th percentile of pairwise gaps)",
    )
    parser.add_argument("--resolve", type=int, default=None, metavar="ITEM", help="settle ITEM")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--score", type=float, default=None, metavar="S", help="adjudicated score")
    how.add_argument("--keep-all", action="store_true", help="keep every rater's rating")
    how.add_argument("--exclude", action="store_true", help="leave the item out of analyses")
    parser.add_argument("--note", default=None, help="why, kept with the decision")
    parser.add_argument(
        "--set",
        dest="label_set",
        default="resolved",
        metavar="NAME",
        help="the label set of the decisions (default: resolved)",
    )
    common.add_json_flag(parser)


def _decision(args: argparse.Namespace) -> Decision | None:
    if args.score is not None:
        return "score"
    if args.keep_all:
        return "keep-all"
    if args.exclude:
        return "exclude"
    return None


def run(args: argparse.Namespace) -> int:
    decision = _decision(args)
    if args.resolve is None:
        if decision is not None or args.note is not None:
            raise UserError(
                "--score, --keep-all, --exclude and --note settle an item: add --resolve ITEM"
            )
        return _list(args)
    if decision is None:
        raise UserError(
            f"say how to settle item {args.resolve}: --score S, --keep-all or --exclude"
        )
    return _resolve(args, decision)


def _resolve(args: argparse.Namespace, decision: Decision) -> int:
    from meaningbench.ops.disagreements import resolve_job

    # Refuses a missing study with the usual message before the op opens it.
    common.open_existing_study(args.study).close()
    done = common.written(
        resolve_job(
            args.study,
            args.resolve,
            decision,
            score=args.score,
            dimension=args.dimension,
            label_set=args.label_set,
            note=args.note,
        )
    )
    if args.json:
        common.print_json(done.to_json())
    else:
        print(f"settled {done.describe()}")
        print(f"analyses use the decisions with --labels {done.label_set}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from meaningbench.analysis.disagreements import find_disagreements

    with common.open_existing_study(args.study, reading=True) as study, study.session() as s:
        report = find_disagreements(s, args.dimension, args.threshold, label_set=args.label_set)
    if args.json:
        common.print_json(report.to_json())
        return 0
    for line in describe_report(report):
        print(line)
    return 0


def _short(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= TEXT_WIDTH else one_line[: TEXT_WIDTH - 1] + "…"


def _item_lines(d: Disagreement) -> list[str]:
    head = f"item {d.item_id}: gap {d.gap:g}"
    if d.system:
        head += f", system {d.system}"
    if d.resolution is not None:
        head += f"; settled: {d.resolution.decision}"
        if d.resolution.score is not None:
            head += f" {d.resolution.score:g}"
    lines = [head, f"  source: {_short(d.source)}", f"  output: {_short(d.output)}"]
    width = max(len(r.rater) for r in d.ratings)
    for r in d.ratings:
        line = f"  {r.rater:<{width}}  {r.value:g}"
        if r.n_ratings > 1:
            line += f" (mean of {r.n_ratings})"
        if r.spans:
            line += "  spans: " + ", ".join(f'"{s.text}" ({s.severity})' for s in r.spans)
        lines.append(line)
    return lines


def describe_report(report: DisagreementReport) -> list[str]:
    """The command's text: the threshold and why, then each item with its raters."""
    n = len(report.items)
    lines = [
        f"{report.dimension}: {n:,} item{'s' if n != 1 else ''} whose raters differ by more "
        f"than {report.describe_threshold()}; {report.n_resolved} of them settled in the "
        f"label set {report.label_set!r}"
    ]
    for d in report.items:
        lines += ["", *_item_lines(d)]
    if n:
        lines += [
            "",
            "settle one: meaningbench disagreements STUDY --resolve ITEM "
            "--score S | --keep-all | --exclude",
        ]
    return lines
