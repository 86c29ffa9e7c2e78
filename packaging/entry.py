"""Entry point of both packaged programs (PyInstaller): one analysis, two executables.

`MeaningBench` is the desktop app; the command line is `meaningbench` on Linux and
`meaningbench-cli` on Windows and macOS, whose file systems do not tell the two names
apart by case. Both run this script and choose by the name they were started as: on
Linux `meaningbench` is a link to `MeaningBench` (the compiled code is there once), so the
name is the one the program was called by, not the file it runs from.
"""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

GUI_NAME = "MeaningBench"


def started_as() -> str:
    if sys.platform.startswith("linux") and sys.argv and sys.argv[0]:
        return Path(sys.argv[0]).name
    return Path(sys.executable).stem


def main() -> int:
    # Background jobs and scoring workers start child processes with "spawn": a frozen
    # program must let such a child run its job instead of starting the program again.
    multiprocessing.freeze_support()
    from meaningbench.interrupts import WATCHER_FLAG

    if sys.argv[1:2] == [WATCHER_FLAG]:  # Ctrl+C's watcher for the command line's jobs
        from meaningbench.interrupts import run_watcher

        return run_watcher(sys.argv[2:])
    if started_as() != GUI_NAME:
        from meaningbench.cli import main as cli

        return int(cli() or 0)
    if sys.argv[1:2] == ["--version"]:
        from meaningbench import __version__

        print(f"meaningbench {__version__}")
        return 0
    from meaningbench.__main__ import main as app

    return app()


if __name__ == "__main__":
    raise SystemExit(main())
