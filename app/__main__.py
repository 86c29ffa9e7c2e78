"""`python -m meaningbench` opens the desktop app (on the study given, if any)."""

from __future__ import annotations

import sys


def main() -> int:
    from meaningbench.desktop import open_app
    from meaningbench.errors import UserError

    try:
        return open_app(sys.argv[1:2] or None)
    except UserError as exc:
        print(f"meaningbench: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
