"""The layers of the package (resources/docs/development.md): the `layers` contract in
pyproject.toml, and the metrics' own rule (no study file), checked here on the import graph
as well so that a plain test run catches an import that reaches up a layer."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
CONTRACT = "The layers of meaningbench, top to bottom"


def _contract() -> dict:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == CONTRACT)


def _layer(text: str) -> grimp.Layer:
    independent = ":" not in text
    names = [n.strip().strip("()") for n in text.replace(":", "|").split("|")]
    return grimp.Layer(*names, independent=independent)


def test_one_layers_contract_covers_the_package_without_exceptions() -> None:
    contract = _contract()
    assert contract["type"] == "layers"
    assert contract["containers"] == ["meaningbench"]
    assert contract["exhaustive"] is True
    assert not contract.get("ignore_imports")
    assert not contract.get("exhaustive_ignores")


def test_no_import_reaches_up_a_layer() -> None:
    graph = grimp.build_graph("meaningbench", cache_dir=None)
    layers = [_layer(text) for text in _contract()["layers"]]
    illegal = graph.find_illegal_dependencies_for_layers(layers, containers={"meaningbench"})
    found = sorted(f"{route.heads} -> {route.tails}" for dep in illegal for route in dep.routes)
    assert not found, f"imports that reach up a layer: {found}"
    declared = {n for layer in layers for n in layer.module_tails}
    undeclared = {m.rpartition(".")[2] for m in graph.find_children("meaningbench")} - declared
    assert not undeclared, f"modules with no layer: {sorted(undeclared)}"


def test_no_metric_imports_the_database() -> None:
    graph = grimp.build_graph("meaningbench", include_external_packages=True, cache_dir=None)
    direct = [
        f"{module} -> {imported}"
        for module in graph.find_descendants("meaningbench.metrics")
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.partition(".")[0] == "sqlalchemy" or imported.startswith("meaningbench.db")
    ]
    assert not direct, f"a metric reads the study itself: {direct}"
