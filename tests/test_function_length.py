"""No function or method under app/ or db/ is longer than 80 lines.

A longer function is split into named steps; the length counts every line from the
`def` (decorators excluded) to the last line of the body, nested functions and classes
included, as a reader scrolls through it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 80


def long_functions(folder: Path, base: Path = ROOT) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                if length > LIMIT:
                    where = path.relative_to(base)
                    found.append(f"{where}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_is_longer_than_80_lines() -> None:
    found = long_functions(ROOT / "app") + long_functions(ROOT / "db")
    assert found == [], "split these into named steps:\n" + "\n".join(found)


def test_the_count_sees_a_long_function(tmp_path: Path) -> None:
    # The check itself: a nested function's lines count for the one around it.
    body = "\n".join(f"        x{i} = {i}" for i in range(LIMIT))
    (tmp_path / "m.py").write_text(f"def outer():\n    def inner():\n{body}\n")
    assert long_functions(tmp_path, tmp_path) == [
        f"m.py:1 outer ({LIMIT + 2} lines)",
        f"m.py:2 inner ({LIMIT + 1} lines)",
    ]
