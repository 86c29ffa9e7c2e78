"""Entry point of the packaged desktop app (PyInstaller)."""

from __future__ import annotations

import multiprocessing
import sys

if __name__ == "__main__":
    # Background jobs start child processes with "spawn": a frozen program must let
    # such a child run its job instead of opening another window.
    multiprocessing.freeze_support()
    if sys.argv[1:2] == ["--version"]:
        from meaningbench import __version__

        print(f"meaningbench {__version__}")
        raise SystemExit(0)
    from meaningbench.ui.launch import launch

    raise SystemExit(launch(sys.argv[1:2] or None))
