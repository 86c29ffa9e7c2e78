"""`meaningbench collect STUDY DIR`: merge every returned rater kit in a folder."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.commands import _common as common
from meaningbench.core.wording import counted

if TYPE_CHECKING:
    from meaningbench.kits.collecting import CollectReport, KitReturn

# Exit status when some kits were refused (the others were collected).
SOME_REFUSED = 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "collect",
        run,
        help="merge the returned rater kits in a folder (each whole or not at all)",
        description="Merge the ratings of every rater kit (*.mbkit) in a folder, each kit "
        "whole or not at all; a kit collected again adds nothing, and the kits are only "
        "read. A kit of another study, one this study did not make, a damaged one, one "
        "whose items, ids or ratings were changed outside MeaningBench, or one holding a "
        "value this study's dimensions refuse is refused with its file named, and the "
        f"others are still collected; the exit status is then {SOME_REFUSED}. The report "
        "counts the rating rows each kit wrote: new ratings, conflicts and earlier values "
        "kept as history, and the controls passed in the kit.",
    )
    parser.add_argument("folder", type=Path, help="the folder holding the returned kits")
    common.add_json_flag(parser)


def _pct(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.0%}"


def _p(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.3f}"


def _json(report: CollectReport) -> dict[str, object]:
    return {
        "collected": [
            {
                "file": str(k.path),
                "rater": k.rater,
                "kit_id": k.kit_id,
                "new_ratings": k.new_ratings,
                "ratings_added": k.rows_written,
                "history_added": k.merge.history_added,
                "already_present": k.merge.duplicates,
                "conflicts": [asdict(c) for c in k.merge.conflicts],
                "checked": not k.unchecked,
                "practice_checked": not k.practice_unchecked,
                "blind": not k.not_blind,
                "controls": k.controls.to_json() if k.controls else None,
                "practice_added": k.practice_added,
            }
            for k in report.collected
        ],
        "refused": [{"file": str(p), "reason": why} for p, why in report.refused],
    }


def _print_kit(k: KitReturn) -> None:
    if k.unchecked:
        print(
            f"{k.path.name} ({k.rater}): made before kits kept a sealed log of their "
            "ratings, so its ratings could not be checked for edits",
            file=sys.stderr,
        )
    if k.practice_unchecked:
        print(
            f"{k.path.name} ({k.rater}): made before kits sealed their practice answers, so "
            "its practice answers could not be checked for edits",
            file=sys.stderr,
        )
    if k.not_blind:
        print(
            f"{k.path.name} ({k.rater}): made before kits were blind, so its rater could tell "
            "its hidden controls from its other items",
            file=sys.stderr,
        )
    practice = f", {counted(k.practice_added, 'practice answer')}" if k.practice_added else ""
    if not (k.rows_written or k.merge.duplicates):
        print(f"{k.path.name} ({k.rater}): no ratings in it yet{practice}")
        return
    print(f"{k.path.name} ({k.rater}): {k.summary()}{practice}")
    if k.controls is not None:
        print(
            f"  controls: identical passed {_pct(k.controls.identical_pass)}, "
            f"unrelated passed {_pct(k.controls.unrelated_pass)}, degraded rated "
            f"below their originals: p = {_p(k.controls.appraise_p)}"
        )


def run(args: argparse.Namespace) -> int:
    from meaningbench.ops.kits import collect_job

    study = common.open_existing_study(args.study)
    try:
        report = common.written(collect_job(study, args.folder))
    finally:
        study.close()
    if args.json:
        common.print_json(_json(report))
    else:
        for k in report.collected:
            _print_kit(k)
        for _path, why in report.refused:
            print(f"refused: {why}", file=sys.stderr)
        print(
            f"{counted(len(report.collected), 'kit')} collected "
            f"({counted(report.new_ratings, 'new rating')}), {len(report.refused):,} refused"
        )
    return SOME_REFUSED if report.refused else 0
