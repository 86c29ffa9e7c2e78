"""The layers of the package (resources/docs/development.md): the `layers` contract in
pyproject.toml, the metrics' own rule (no study file), and Qt in meaningbench.ui alone,
checked here on the import graph as well so that a plain test run catches an import that
reaches up a layer or brings Qt into the engine."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

import grimp

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
CONTRACT = "The layers of meaningbench, top to bottom"
QT_CONTRACT = "Qt lives only in meaningbench.ui"
# The desktop app's libraries: the `app` extra, which the engine installs without.
QT = ("PySide6", "pyqtgraph")


def _contract(name: str = CONTRACT) -> dict:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == name)


@cache
def _graph_with_externals() -> grimp.ImportGraph:
    return grimp.build_graph("meaningbench", include_external_packages=True, cache_dir=None)


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
    graph = _graph_with_externals()
    direct = [
        f"{module} -> {imported}"
        for module in graph.find_descendants("meaningbench.metrics")
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.partition(".")[0] == "sqlalchemy" or imported.startswith("meaningbench.db")
    ]
    assert not direct, f"a metric reads the study itself: {direct}"


def test_the_qt_contract_covers_every_module_but_the_ui() -> None:
    # Exhaustive by this test: a new top-level module is forbidden Qt unless listed in ui.
    contract = _contract(QT_CONTRACT)
    assert contract["type"] == "forbidden"
    assert set(contract["forbidden_modules"]) == set(QT)
    assert not contract.get("ignore_imports")
    graph = _graph_with_externals()
    others = graph.find_children("meaningbench") - {"meaningbench.ui"}
    assert "meaningbench.cli" in others and "meaningbench.db" in others
    assert sorted(contract["source_modules"]) == sorted(others)


def test_no_module_outside_the_ui_imports_qt() -> None:
    graph = _graph_with_externals()
    outside = graph.find_children("meaningbench") - {"meaningbench.ui"}
    modules = set(outside).union(*(graph.find_descendants(m) for m in outside))
    direct = sorted(
        f"{module} -> {imported}"
        for module in modules
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.partition(".")[0] in QT
    )
    assert not direct, f"Qt imported outside meaningbench.ui: {direct}"
