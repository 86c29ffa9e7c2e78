"""Screens only ask: the UI reads through `meaningbench.queries` and runs work through
`meaningbench.runtime`, never importing SQLAlchemy or the engine's packages directly (the
import contract in pyproject.toml, checked here on the import graph as well so a plain test
run catches a stray import)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
CONTRACT = "Screens only ask"
FORBIDDEN = (
    "sqlalchemy",
    "meaningbench.db",
    "meaningbench.analysis",
    "meaningbench.annotation",
    "meaningbench.datasets",
    "meaningbench.metrics",
    "meaningbench.training",
    "meaningbench.jobs",
    "meaningbench.cluster",
    "meaningbench.commands",
)


def _contract() -> dict:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == CONTRACT)


def _direct_engine_imports() -> set[str]:
    graph = grimp.build_graph("meaningbench", include_external_packages=True)
    found = set()
    for module in graph.find_children("meaningbench.ui") | graph.find_descendants(
        "meaningbench.ui"
    ):
        for imported in graph.find_modules_directly_imported_by(module):
            if any(imported == f or imported.startswith(f + ".") for f in FORBIDDEN):
                found.add(f"{module} -> {imported}")
    return found


def test_the_contract_forbids_the_engine_to_the_ui() -> None:
    contract = _contract()
    assert contract["type"] == "forbidden"
    assert contract["source_modules"] == ["meaningbench.ui"]
    assert set(contract["forbidden_modules"]) == set(FORBIDDEN)


def test_the_ui_imports_the_engine_only_where_the_contract_still_lists_it() -> None:
    allowed = set(_contract().get("ignore_imports", []))
    found = _direct_engine_imports()
    stray = found - allowed
    assert not stray, f"the UI imports the engine directly: {sorted(stray)}"
    # Every listed exception is an import that still exists: the graph sees these imports
    # (so it would see a new one), and a screen moved to the queries drops off the list.
    assert allowed <= found, f"no longer imported, drop from the contract: {allowed - found}"
    # The listed exceptions start work; screens that only read are never among them, and
    # no exception reaches the database.
    readers = ("meaningbench.ui.browser", "meaningbench.ui.compare", "meaningbench.ui.welcome")
    assert not [line for line in allowed if line.startswith(readers)]
    targets = [line.split(" -> ")[1] for line in allowed]
    assert not [
        t for t in targets if t.split(".")[0] == "sqlalchemy" or t.startswith("meaningbench.db")
    ]
