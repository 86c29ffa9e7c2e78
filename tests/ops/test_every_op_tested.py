"""Every module of `meaningbench.ops` has its own tests here, `tests/ops/test_<module>.py`,
and that file calls each public function the module defines (by name: an op reached only
through the command line or a screen is not tested directly).

Checked against the source tree, so a module added to app/ops fails here at once. Functions
not yet called by their module's test are named in UNCALLED with the reason; an entry that is
called now fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPS = ROOT / "app" / "ops"
TESTS = Path(__file__).resolve().parent

# "module.function": why its module's test does not call it yet.
UNCALLED: dict[str, str] = {}


def op_modules(folder: Path = OPS) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")


def public_functions(path: Path) -> list[str]:
    """The public functions a module defines at its top level (not those it imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    ]


def uncalled(module: str, tests: Path = TESTS, ops: Path = OPS) -> list[str]:
    """The module's public functions its test file never names (all, without a test file)."""
    functions = public_functions(ops / f"{module}.py")
    test = tests / f"test_{module}.py"
    if not test.is_file():
        return functions
    text = test.read_text(encoding="utf-8")
    return [f for f in functions if not re.search(rf"\b{re.escape(f)}\b", text)]


def test_every_op_module_has_its_test_file() -> None:
    missing = [m for m in op_modules() if not (TESTS / f"test_{m}.py").is_file()]
    assert missing == [], f"app/ops modules without tests/ops/test_<module>.py: {missing}"


@pytest.mark.parametrize("module", op_modules())
def test_each_public_function_is_called_by_its_modules_test(module: str) -> None:
    left = [f for f in uncalled(module) if f"{module}.{f}" not in UNCALLED]
    assert left == [], f"tests/ops/test_{module}.py calls none of {left}"


def test_the_list_of_uncalled_functions_only_shrinks() -> None:
    stale = [name for name in UNCALLED if name.split(".")[1] not in uncalled(name.split(".")[0])]
    assert stale == [], f"called now, drop them from UNCALLED: {stale}"


def test_a_module_added_without_its_test_is_found(tmp_path: Path) -> None:
    ops, tests = tmp_path / "ops", tmp_path / "tests"
    ops.mkdir()
    tests.mkdir()
    (ops / "__init__.py").write_text("")
    (ops / "polish.py").write_text("def polish_job(path):\n    pass\n\ndef _helper():\n    pass\n")
    assert op_modules(ops) == ["polish"]
    assert uncalled("polish", tests, ops) == ["polish_job"]
    (tests / "test_polish.py").write_text("from x import polish_jobs\n")
    assert uncalled("polish", tests, ops) == ["polish_job"]  # a longer name is no call
    (tests / "test_polish.py").write_text("polish_job(path)(ctx)\n")
    assert uncalled("polish", tests, ops) == []
