"""`meaningbench gui [STUDY]`: open the desktop app (on the study given, if any)."""

from __future__ import annotations

import argparse
from pathlib import Path

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "gui",
        run,
        study=False,
        help="open the desktop app",
        description="Open the desktop app on STUDY, or on the most recent study, or on the "
        "welcome page.",
    )
    parser.add_argument(
        "study",
        type=Path,
        nargs="?",
        help="a study file (.mbstudy) to open, or a rater kit (.mbkit), which opens on its "
        "rating screen",
    )


def run(args: argparse.Namespace) -> int:
    # Imported here: `meaningbench --help` and the headless commands never load Qt.
    from meaningbench.desktop import open_app

    return open_app([str(args.study)] if args.study else None)
