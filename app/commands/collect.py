"""`meaningbench collect STUDY DIR`: merge every returned rater kit in a folder."""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import asdict
from pathlib import Path

from meaningbench.commands import _common as common

# Exit status when some kits were refused (the others were collected).
SOME_REFUSED = 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "collect",
        run,
        help="merge the returned rater kits in a folder (each whole or not at all)",
        description="Merge the ratings of every rater kit (*.mbkit) in a folder, each kit "
        "whole or not at all; a kit collected again adds nothing. A kit of another study, "
        "one this study did not make, or one whose items or ids were changed is refused "
        "with its file named, and the others are still collected; the exit status is then "
        f"{SOME_REFUSED}. The report names each rater's new ratings, conflicts and the "
        "controls passed in the kit.",
    )
    parser.add_argument("folder", type=Path, help="the folder holding the returned kits")
    common.add_json_flag(parser)


def _pct(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.0%}"


def _p(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.3f}"


def run(args: argparse.Namespace) -> int:
    from meaningbench.kits.collecting import collect_kits

    study = common.open_existing_study(args.study)
    try:
        report = collect_kits(study, args.folder)
    finally:
        study.close()
    if args.json:
        common.print_json(
            {
                "collected": [
                    {
                        "file": str(k.path),
                        "rater": k.rater,
                        "kit_id": k.kit_id,
                        "ratings_added": k.merge.ratings_added,
                        "already_present": k.merge.duplicates,
                        "conflicts": [asdict(c) for c in k.merge.conflicts],
                        "controls": k.controls.to_json() if k.controls else None,
                    }
                    for k in report.collected
                ],
                "refused": [{"file": str(p), "reason": why} for p, why in report.refused],
            }
        )
    else:
        for k in report.collected:
            if not (k.merge.ratings_added or k.merge.duplicates):
                print(f"{k.path.name} ({k.rater}): no ratings in it yet")
                continue
            print(f"{k.path.name} ({k.rater}): {k.merge.summary()}")
            if k.controls is not None:
                print(
                    f"  controls: identical passed {_pct(k.controls.identical_pass)}, "
                    f"unrelated passed {_pct(k.controls.unrelated_pass)}, degraded rated "
                    f"below their originals: p = {_p(k.controls.appraise_p)}"
                )
        for _path, why in report.refused:
            print(f"refused: {why}", file=sys.stderr)
        print(f"{len(report.collected)} kits collected, {len(report.refused)} refused")
    return SOME_REFUSED if report.refused else 0
