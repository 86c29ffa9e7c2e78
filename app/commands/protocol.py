"""`meaningbench protocol STUDY`: show or choose how the study's raters judge items."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from meaningbench.commands import _common as common

if TYPE_CHECKING:
    from meaningbench.annotation.protocols import PracticeOptions

CHOICES = ("da", "esa", "sxs", "likert")
# The names of `meaningbench.annotation.settings.AFTER_FAILED_PRACTICE`.
AFTER_FAILED = ("stop", "flag")
PASS_MARK = re.compile(r"(\d+)\s+of\s+(\d+)(?:\s+within\s+(\d+(?:\.\d+)?))?", re.IGNORECASE)
# The names of `meaningbench.annotation.settings.SELECTIONS`, kept here so that the parser
# is built without importing the engine.
SELECTIONS = ("random", "disagreement", "variance", "diversity", "mix", "balanced")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "protocol",
        run,
        help="show or choose the annotation protocol: da, esa, sxs or likert",
        description="Show the study's annotation protocol, or choose it before raters start: "
        "da (a 0–100 slider per dimension), esa (mark meaning errors as minor or major spans "
        "in the output, then score 0–100), sxs (the outputs of one source side by side, each "
        "on its own slider, in a random order that is recorded) or likert (five labelled "
        "points). Once the study's raters have rated, the protocol can no longer change.",
    )
    parser.add_argument("--set", dest="protocol", choices=CHOICES, help="the protocol to use")
    _add_screen_flags(parser)
    _add_kit_and_selection_flags(parser)
    _add_practice_flags(parser)
    common.add_json_flag(parser)


def _add_practice_flags(parser: argparse.ArgumentParser) -> None:
    """The practice pass mark: how well, in how many attempts, and what follows a failure."""
    mark = parser.add_mutually_exclusive_group()
    mark.add_argument(
        "--practice-pass-mark",
        dest="pass_mark",
        metavar="'K of M within N'",
        default=None,
        help="raters must pass the practice before rating: in one attempt, at least K of "
        "the study's M practice items within N points of their expected range (N = 0: "
        "inside it), e.g. '4 of 5 within 10'; add the practice items first",
    )
    mark.add_argument(
        "--no-practice-pass-mark",
        dest="pass_mark",
        action="store_false",
        help="no pass mark: the practice is one pass and raters rate whatever their answers",
    )
    parser.add_argument(
        "--practice-attempts",
        type=int,
        metavar="N",
        default=None,
        help="how many times a rater may go through the practice to pass (default 2)",
    )
    parser.add_argument(
        "--after-failed-practice",
        choices=AFTER_FAILED,
        default=None,
        help="after the last failed attempt: stop (the rater cannot rate, and is told to "
        "contact you; the default) or flag (they rate, flagged on the Campaign page)",
    )


def _pass_mark(text: str | bool | None) -> PracticeOptions | None:
    from meaningbench.annotation.protocols import PracticeOptions
    from meaningbench.errors import UserError

    if text is None:
        return None
    if text is False:
        return PracticeOptions(items=False)
    found = PASS_MARK.fullmatch(str(text).strip())
    if found is None:
        raise UserError(
            f"--practice-pass-mark {text!r}: write it as 'K of M within N', e.g. "
            "'4 of 5 within 10' (4 of the 5 practice items within 10 points of their range)"
        )
    items, out_of, points = found.groups()
    return PracticeOptions(
        items=int(items), out_of=int(out_of), points=float(points) if points else 0.0
    )


def _add_screen_flags(parser: argparse.ArgumentParser) -> None:
    """What the rating screen shows: the number, source spans, pre-filled spans."""
    number = parser.add_mutually_exclusive_group()
    number.add_argument(
        "--hidden-number",
        dest="hidden_number",
        action="store_true",
        default=None,
        help="the slider shows no number, only that it is set (as in Appraise)",
    )
    number.add_argument(
        "--show-number", dest="hidden_number", action="store_false", help="show the number"
    )
    spans = parser.add_mutually_exclusive_group()
    spans.add_argument(
        "--source-spans",
        dest="source_spans",
        action="store_true",
        default=None,
        help="esa: omissions may be marked as spans in the source too",
    )
    spans.add_argument(
        "--no-source-spans",
        dest="source_spans",
        action="store_false",
        help="esa: spans in the output only",
    )
    prefill = parser.add_mutually_exclusive_group()
    prefill.add_argument(
        "--prefill-spans",
        dest="prefill",
        metavar="RUN",
        default=None,
        help="esa: pre-fill the screen with the error spans of a stored llm_judge run "
        "(its label, e.g. 'llm_judge[template=esa]'; score it first), for the rater to keep, "
        "edit or delete",
    )
    prefill.add_argument(
        "--no-prefill-spans",
        dest="prefill",
        action="store_false",
        help="esa: raters start with no spans",
    )


def _add_kit_and_selection_flags(parser: argparse.ArgumentParser) -> None:
    """What kits keep, and which items the queues ask first."""
    systems = parser.add_mutually_exclusive_group()
    systems.add_argument(
        "--show-systems",
        dest="show_systems",
        action="store_true",
        default=None,
        help="kits made from now on keep each output's system name (the rating screen never "
        "shows it)",
    )
    systems.add_argument(
        "--hide-systems",
        dest="show_systems",
        action="store_false",
        help="kits leave the system names out, so raters rate blind (the default)",
    )
    parser.add_argument(
        "--selection",
        choices=SELECTIONS,
        help="which items the queues ask first, from the stored metric scores (balanced: the "
        "systems) only, never from a rating: random "
        "(the default), disagreement (items the metrics rank most differently), variance "
        "(sources whose outputs the metrics score most differently), diversity (every "
        "cluster of score profiles in proportion), mix (disagreement and diversity in "
        "turn), or, to rank systems, balanced (the systems in turn, equal numbers of each, "
        "on shared sources first; no scores read); see `meaningbench simulate`",
    )
    runs = parser.add_mutually_exclusive_group()
    runs.add_argument(
        "--selection-metrics",
        metavar="RUNS",
        default=None,
        help="comma-separated finished metric runs the selection reads (labels such as "
        "'bleu[refs=source]' or bare names with one configuration); default: every one",
    )
    runs.add_argument(
        "--all-selection-metrics",
        dest="selection_metrics",
        action="store_false",
        help="the selection reads every finished metric run",
    )


def run(args: argparse.Namespace) -> int:
    from meaningbench.annotation.protocols import study_protocol
    from meaningbench.ops.settings import set_protocol

    changing = args.protocol is not None or args.hidden_number is not None
    changing = changing or args.source_spans is not None or args.prefill is not None
    changing = changing or args.selection is not None or args.selection_metrics is not None
    changing = changing or args.show_systems is not None
    practice = _pass_mark(args.pass_mark)
    if args.practice_attempts is not None or args.after_failed_practice is not None:
        from meaningbench.annotation.protocols import PracticeOptions

        practice = replace(
            practice or PracticeOptions(),
            attempts=args.practice_attempts,
            after_failed=args.after_failed_practice,
        )
    changing = changing or practice is not None
    names = args.selection_metrics
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
        if not names:
            from meaningbench.errors import UserError

            raise UserError(
                "--selection-metrics names no run: give one or more finished metric runs "
                "(e.g. 'bleu[refs=source]'), or --all-selection-metrics for every one"
            )
    study = common.open_existing_study(args.study, reading=not changing)
    try:
        if changing:
            choice = common.written(
                set_protocol(
                    study,
                    args.protocol,
                    hidden_number=args.hidden_number,
                    source_spans=args.source_spans,
                    prefill=args.prefill,
                    selection=args.selection,
                    selection_metrics=names,
                    show_systems=args.show_systems,
                    practice=practice,
                )
            )
        else:
            choice = study_protocol(study)
    finally:
        study.close()
    if args.json:
        common.print_json(choice.to_dict())
    else:
        print(f"protocol: {choice.line()}")
        print(f"selection: {choice.selection_line()}")
        print(f"practice: {choice.practice_line()}")
    return 0
