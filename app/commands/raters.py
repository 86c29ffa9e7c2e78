"""`meaningbench raters STUDY`: live rater checks with warnings against the study's thresholds."""

from __future__ import annotations

import argparse
import math

from meaningbench.commands import _common as common
from meaningbench.core.wording import counted


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "raters",
        run,
        help="per-rater checks: agreement with the others, QC pass rates, straight-lining, speed",
        description="Check each named rater: Pearson r with the mean of the other raters "
        "(leave one rater out), the share of identical and unrelated controls passed, repeat "
        "consistency, the share of ratings on one value (straight-lining) and the median "
        "seconds per item, with a warning wherever the study's thresholds are crossed, and "
        "a rater-quality weight. --threshold NAME=VALUE stores a threshold in the study: "
        "min_agreement, identical_min, unrelated_max, min_qc_pass_rate, max_repeat_mad, "
        "max_same_share, min_median_seconds. A machine rater (`judge --as-rater`) is shown "
        "beside them with its r against the raters' mean and its control pass rates. "
        "--over-time cuts each rater's ratings, in the order given, into stretches of "
        "--stretch items and checks each stretch: controls passed, median seconds per item, "
        "r with the others, ratings on one value, with the practice answers passed.",
    )
    common.add_dimension_argument(parser)
    parser.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="store a threshold for this study (repeatable)",
    )
    parser.add_argument(
        "--over-time",
        action="store_true",
        help="check each rater's consecutive stretches of ratings, in the order given",
    )
    parser.add_argument(
        "--stretch",
        type=int,
        default=20,
        metavar="N",
        help="ratings per stretch with --over-time (default: 20)",
    )
    common.add_json_flag(parser)


def _fmt(x: float, spec: str) -> str:
    return "–" if not math.isfinite(x) else format(x, spec)


def run(args: argparse.Namespace) -> int:
    from meaningbench.analysis.rater_checks import RaterThresholds, study_rater_checks
    from meaningbench.core.numbers import NumberProblem, plain_number
    from meaningbench.errors import UserError
    from meaningbench.ops.settings import add_rater_thresholds

    known = set(RaterThresholds.__dataclass_fields__)
    new: dict[str, float] = {}
    for spec in args.threshold:
        name, _, value = spec.partition("=")
        if name not in known:
            raise UserError(
                f"--threshold {spec}: unknown name; choose one of {', '.join(sorted(known))}."
            )
        try:
            new[name] = plain_number(value)
        except NumberProblem as exc:
            raise UserError(f"--threshold {spec}: {exc}.") from None
    if args.over_time:
        if new:
            raise UserError("--threshold stores thresholds; give it without --over-time.")
        return _over_time(args)
    study = common.open_existing_study(args.study, reading=not new)
    try:
        if new:
            common.run_op(add_rater_thresholds(study, new))
        checks = study_rater_checks(study, args.dimension)
    finally:
        study.close()
    if args.json:
        common.print_json([c.to_json() for c in checks])
        return 0
    humans = sum(not c.machine for c in checks)
    machines = len(checks) - humans
    shown = f"{humans}, machine {machines}" if machines else f"{humans}"
    print(f"raters: {shown} ({args.dimension})")
    for c in checks:
        if c.machine:
            print(
                f"  {c.rater} [machine]: {counted(c.n_ratings, 'rating')}, r with the raters' mean = "
                f"{_fmt(c.agreement_r, '.2f')} (n {c.agreement_n}), identical "
                f"{_fmt(c.identical_pass, '.0%')}, unrelated {_fmt(c.unrelated_pass, '.0%')}; "
                "not part of any human score"
            )
            for w in c.warnings:
                print(f"    ! {w}")
            continue
        print(
            f"  {c.rater}: {counted(c.n_ratings, 'rating')}, r = {_fmt(c.agreement_r, '.2f')} "
            f"(n {c.agreement_n}), identical {_fmt(c.identical_pass, '.0%')}, "
            f"unrelated {_fmt(c.unrelated_pass, '.0%')}, repeats ±{_fmt(c.repeat_mad, '.1f')}, "
            f"one value {c.same_share:.0%}, {_fmt(c.median_seconds, '.1f')} s/item, "
            f"weight {c.weight:.2f}"
        )
        for w in c.warnings:
            print(f"    ! {w}")
    return 0


def _over_time(args: argparse.Namespace) -> int:
    from meaningbench.analysis.rater_timeline import study_timeline
    from meaningbench.errors import UserError
    from meaningbench.queries.rater_timeline import figures_line, span_text

    if args.stretch < 1:
        raise UserError(f"--stretch {args.stretch}: a stretch holds at least 1 rating.")
    study = common.open_existing_study(args.study, reading=True)
    try:
        t = study_timeline(study, args.dimension, args.stretch)
    finally:
        study.close()
    if args.json:
        common.print_json(t.to_json())
        return 0
    if not t.raters:
        print(f"No rater has given {t.dimension} ratings in this study yet.")
        return 0
    print(f"raters over time: {len(t.raters)} ({t.dimension}), stretches in the order rated")
    for r in t.raters:
        practice = (
            f", practice {r.practice_passed} of {r.practice_answered} passed"
            if r.practice_answered
            else ""
        )
        n = len(r.stretches)
        print(
            f"  {r.rater}: {counted(r.n_ratings, 'rating')} in "
            f"{n} stretch{'es' if n != 1 else ''} of {t.stretch}{practice}"
        )
        for s in r.stretches:
            print(f"  {'!' if s.flagged else ' '} {span_text(s)}: {figures_line(s)}")
            for w in s.warnings:
                print(f"        {w}")
    return 0
