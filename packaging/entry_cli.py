"""Entry point of the packaged command line (PyInstaller)."""

from __future__ import annotations

import multiprocessing

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the scoring pool's worker processes
    from meaningbench.cli import main

    raise SystemExit(main())
