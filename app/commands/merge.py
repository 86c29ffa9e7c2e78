"""`meaningbench merge STUDY OTHER`: bring the ratings of another copy of a study back in."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "merge",
        run,
        help="merge the ratings and notes of another copy of the study (conflicts never overwrite)",
        description="Merge the ratings and notes of another copy of this study, e.g. one an "
        "annotator rated on another computer. Items are matched by their texts and system; "
        "where both copies hold a different current rating of the same item, annotator and "
        "dimension, ours stays current and theirs is kept as history and reported.",
    )
    parser.add_argument("other", type=Path, help="the other copy of the study (.mbstudy)")
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.ops.merge import merge_job

    study = common.open_existing_study(args.study)
    try:
        report = common.written(merge_job(study, args.other))
    finally:
        study.close()
    if args.json:
        out = asdict(report)
        out["other"] = str(report.other)
        common.print_json(out)
    else:
        print(f"merged {report.other}: {report.summary()}")
        for c in report.conflicts[:20]:
            print(
                f"  conflict: item {c.item_id}, {c.annotator}, {c.dimension}: ours {c.ours:g}, theirs {c.theirs:g}"
            )
        if len(report.conflicts) > 20:
            print(f"  ... and {len(report.conflicts) - 20} more (see --json)")
    return 0
