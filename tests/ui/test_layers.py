"""The UI is a skin: its modules read studies through `meaningbench.queries`, never through
SQLAlchemy or `meaningbench.db` directly (the import contract in pyproject.toml, checked
here on the import graph as well so a plain test run catches a stray import)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
CONTRACT = "The UI is a skin: it reads studies only through meaningbench.queries"
FORBIDDEN = ("sqlalchemy", "meaningbench.db")


def _contract() -> dict:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == CONTRACT)


def _direct_database_imports() -> set[str]:
    graph = grimp.build_graph("meaningbench", include_external_packages=True)
    found = set()
    for module in graph.find_children("meaningbench.ui") | graph.find_descendants("meaningbench.ui"):
        for imported in graph.find_modules_directly_imported_by(module):
            if any(imported == f or imported.startswith(f + ".") for f in FORBIDDEN):
                found.add(f"{module} -> {imported}")
    return found


def test_the_contract_forbids_the_database_to_the_ui() -> None:
    contract = _contract()
    assert contract["type"] == "forbidden"
    assert contract["source_modules"] == ["meaningbench.ui"]
    assert set(contract["forbidden_modules"]) == set(FORBIDDEN)


def test_the_ui_imports_the_database_only_where_the_contract_still_lists_it() -> None:
    allowed = set(_contract().get("ignore_imports", []))
    found = _direct_database_imports()
    stray = found - allowed
    assert not stray, f"the UI imports the database directly: {sorted(stray)}"
    # Every listed exception is an import that still exists: the graph sees these imports
    # (so it would see a new one), and a screen moved to the queries drops off the list.
    assert allowed <= found, f"no longer imported, drop from the contract: {allowed - found}"
    # The listed exceptions belong to screens still being moved to meaningbench.queries;
    # none of them may be in the modules that already read through the queries.
    converted = ("meaningbench.ui.browser", "meaningbench.ui.dashboard", "meaningbench.ui.training")
    assert not [line for line in allowed if line.startswith(converted)]
