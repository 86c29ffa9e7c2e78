"""`meaningbench campaign STUDY`: the rating campaign's progress and quality, per rater and item."""

from __future__ import annotations

import argparse
import math

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "campaign",
        run,
        help="per rater: kits sent and returned, progress, QC and agreement; per item: ratings in",
        description="The rating campaign at a glance. Per rater: kits sent and returned, "
        "items done out of assigned (controls included), the share of identical and "
        "unrelated controls passed, Pearson r with the other raters (leave one out), the "
        "median seconds per item and the last return. Per item: how many of its k ratings "
        "are in (k: the study's overlap). `meaningbench kit STUDY --top-up --raters …` "
        "makes kits of the items still short.",
    )
    common.add_dimension_argument(parser)
    common.add_json_flag(parser)


def _fmt(x: float, spec: str) -> str:
    return "–" if not math.isfinite(x) else format(x, spec)


def run(args: argparse.Namespace) -> int:
    from meaningbench.kits.campaign import campaign

    study = common.open_existing_study(args.study, reading=True)
    try:
        result = campaign(study, args.dimension)
    finally:
        study.close()
    if args.json:
        common.print_json(result.to_json())
        return 0
    print(f"raters: {len(result.raters)} (k = {result.k} ratings per item, {result.dimension})")
    for r in result.raters:
        print(
            f"  {r.rater}: kits {r.kits_returned}/{r.kits_sent} returned, "
            f"{r.done}/{r.assigned} done, identical {_fmt(r.identical_pass, '.0%')}, "
            f"unrelated {_fmt(r.unrelated_pass, '.0%')}, r = {_fmt(r.agreement_r, '.2f')}, "
            f"{_fmt(r.median_seconds, '.1f')} s/item, last return {r.last_return or '–'}"
            + (f", practice {r.practice}" if r.practice else "")
        )
    counts = ", ".join(f"{c} with {n}" for n, c in result.counts().items())
    print(f"items: {len(result.items)} ({counts}); {len(result.short)} short of {result.k}")
    return 0
