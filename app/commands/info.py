"""`meaningbench info STUDY`: what a study holds (datasets, items, item attributes, raters,
dimensions, runs)."""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING

from meaningbench.commands import _common as common

if TYPE_CHECKING:
    from meaningbench.db.study import Study


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "info",
        run,
        help="summarise a study: datasets, items, systems, item attributes, annotators, "
        "dimensions, metric runs",
        description="Summarise a study from counts alone (fast on a million items).",
    )
    common.add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from meaningbench.datasets.info import study_info

    study = common.open_existing_study(args.study, reading=True)
    try:
        _close_interrupted_runs(study)
        info = study_info(study)
    finally:
        study.close()
    if args.json:
        common.print_json(info.to_dict())
    else:
        print("\n".join(info.lines()))
    return 0


def _close_interrupted_runs(study: Study) -> None:
    """Runs left `running` by a killed `score` are shown, and stored, as interrupted. A
    study that cannot be written now (read-only, busy) is summarised as it is."""
    import sqlite3

    from sqlalchemy.exc import DBAPIError

    from meaningbench.db.engine import NO_WAIT
    from meaningbench.db.errors import StudyFileError
    from meaningbench.ops.score import close_gone_runs

    study.set_wait_policy(NO_WAIT)  # no waiting on another process's long write for this
    # The runs are still shown as interrupted (see study_info); only storing it waits.
    with contextlib.suppress(sqlite3.Error, DBAPIError, StudyFileError):
        common.run_op(close_gone_runs(study))
