"""Screens only ask: the UI reads through `meaningbench.queries` and starts writes from
`meaningbench.ops`, never importing SQLAlchemy or the engine's packages directly (the
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
    "meaningbench.kits",
)


def _contract() -> dict:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == CONTRACT)


def _direct_engine_imports() -> set[str]:
    graph = grimp.build_graph("meaningbench", include_external_packages=True, cache_dir=None)
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


def test_the_ui_imports_nothing_of_the_engine_but_what_it_may_ask() -> None:
    # No exception is listed: every screen reads through the queries and writes through ops.
    assert "ignore_imports" not in _contract()
    found = _direct_engine_imports()
    assert not found, f"the UI imports the engine directly: {sorted(found)}"
