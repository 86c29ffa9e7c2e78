"""`meaningbench demo`: open the demo study, building it first if the user has none."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from meaningbench.commands import _common as common


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = common.add_command(
        subparsers,
        "demo",
        run,
        study=False,
        help="open the demo study (60 illustrative items, two demo raters) in the app",
        description="Build the demo study in your studies folder if it is not there yet "
        "(an existing one is opened, never replaced), then open it in the app.",
    )
    parser.add_argument("--no-gui", action="store_true", help="only build it and print its path")
    parser.add_argument(
        "--path", type=Path, help="where the demo study lives (default: studies folder)"
    )


def run(args: argparse.Namespace) -> int:
    from meaningbench.db.study import open_study
    from meaningbench.desktop import require_display
    from meaningbench.ops.demo import build_demo_job

    if not args.no_gui:
        require_display()  # before the build: where no window can open, say so first

    demo = common.written(build_demo_job(args.path))
    path = demo.path
    if not demo.built:
        open_study(path).close()  # an existing file must be a study we can open
    # The path alone on stdout, so that scripts can write S=$(meaningbench demo --no-gui).
    print(f"{'built' if demo.built else 'opening'} demo study {path}", file=sys.stderr)
    print(path)
    if args.no_gui:
        return 0
    from meaningbench.ui.launch import launch

    return int(launch([str(path)]) or 0)
