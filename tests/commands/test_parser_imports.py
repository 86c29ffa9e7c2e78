"""Building the command line stays light: every `meaningbench` command pays for it."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy", "pandas", "torch", "transformers", "sqlalchemy", "numba", "onnxruntime")


def test_building_the_parser_imports_no_heavy_library() -> None:
    code = (
        "import json, sys\n"
        "from meaningbench.cli import build_parser\n"
        "build_parser()\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
