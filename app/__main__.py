"""`python -m meaningbench` opens the desktop app (on the study given, if any)."""

from __future__ import annotations

import sys


def main() -> int:
    from meaningbench.ui.launch import launch

    return launch(sys.argv[1:2] or None)


if __name__ == "__main__":
    raise SystemExit(main())
