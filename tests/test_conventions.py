"""Where each kind of module goes (resources/docs/development.md, "One place per kind"),
checked against the source tree so that the rules stay true:

- a page (a `…Page` class) is `ui/<area>/page.py`, one per area;
- a dialog (a `QDialog` subclass) sits in a folder of `ui`: `ui/dialogs/` for the window's,
  the area's own folder for an area's, never among the window's modules in `ui/` itself;
- a module's place says its kind, so no module of `ui` ends in `_page` or `_dialog`;
- a module of `metrics/neural/` is one metric that an entry point names; what the metrics
  run on (models, encoding, batching, caches…) is `metrics/neural/support/`;
- every folder of modules is a package (it has an `__init__.py`).

Modules that still break a rule are named below with where they go; an entry there that
no longer breaks its rule fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app"
UI = APP / "ui"
NEURAL = APP / "metrics" / "neural"
SUPPORT = NEURAL / "support"
FOLDERS = (APP, ROOT / "db", ROOT / "resources")

# Modules that still break a rule, each with where it goes.
PAGES_TO_MOVE: dict[str, str] = {}
DIALOGS_TO_MOVE: dict[str, str] = {}
NAMES_TO_CHANGE: dict[str, str] = {}


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@cache
def _classes(path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The module's top-level classes, each with the names of its bases."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = tuple(ast.unparse(b).rpartition(".")[2] for b in node.bases)
            found.append((node.name, bases))
    return tuple(found)


def pages(path: Path) -> list[str]:
    return [c for c, _ in _classes(path) if c.endswith("Page") and not c.startswith("_")]


def dialogs(path: Path) -> list[str]:
    return [c for c, bases in _classes(path) if any(b.endswith("Dialog") for b in bases)]


def _page_breaks(path: Path) -> bool:
    in_area = path.name == "page.py" and path.parent.parent == UI
    return bool(pages(path)) and not in_area


def _dialog_breaks(path: Path, ui: Path = UI) -> bool:
    return bool(dialogs(path)) and path.parent == ui


def _name_breaks(path: Path) -> bool:
    return path.stem.endswith(("_page", "_dialog"))


def _breaking(
    rule: Callable[[Path], bool], exceptions: dict[str, str]
) -> tuple[list[str], list[str]]:
    """The modules that break `rule` and are not named, and the named ones that keep it."""
    broken = {_name(p) for p in _modules(UI) if rule(p)}
    return sorted(broken - exceptions.keys()), sorted(exceptions.keys() - broken)


def test_a_page_is_its_areas_page_module() -> None:
    unnamed, kept = _breaking(_page_breaks, PAGES_TO_MOVE)
    assert not unnamed, f"a page belongs in ui/<area>/page.py: {unnamed}"
    assert not kept, f"these keep the rule now; take them off PAGES_TO_MOVE: {kept}"
    areas = list(UI.glob("*/page.py"))
    assert areas, "no area holds a page"
    for path in areas:
        assert len(pages(path)) == 1, f"{_name(path)} holds {pages(path)}"


def test_a_dialog_sits_in_a_folder_of_ui() -> None:
    unnamed, kept = _breaking(_dialog_breaks, DIALOGS_TO_MOVE)
    assert not unnamed, f"a dialog belongs in ui/dialogs/ or its area's folder: {unnamed}"
    assert not kept, f"these keep the rule now; take them off DIALOGS_TO_MOVE: {kept}"
    assert all(dialogs(p) for p in _modules(UI / "dialogs") if p.name not in _DIALOG_HELPERS)


# The modules of ui/dialogs/ that hold no dialog class: what the dialogs share.
_DIALOG_HELPERS = {"__init__.py", "dialog_terms.py", "errors.py"}


def test_a_modules_place_says_its_kind_not_its_name() -> None:
    unnamed, kept = _breaking(_name_breaks, NAMES_TO_CHANGE)
    assert not unnamed, f"drop the _page or _dialog: the place says it: {unnamed}"
    assert not kept, f"these keep the rule now; take them off NAMES_TO_CHANGE: {kept}"


@cache
def _neural_entry_points() -> dict[str, str]:
    """The entry points' metric modules of the neural family, by entry point name."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    points = config["project"]["entry-points"]["meaningbench.metrics"]
    prefix = "meaningbench.metrics.neural."
    return {n: v.partition(":")[0] for n, v in points.items() if v.startswith(prefix)}


def test_a_neural_module_is_one_metric_and_its_support_no_metric() -> None:
    named = set(_neural_entry_points().values())
    assert named, "no entry point names a neural metric"
    assert not {m for m in named if m.count(".") != 3}, "an entry point names support"
    modules = {f"meaningbench.metrics.neural.{p.stem}" for p in NEURAL.glob("*.py")}
    modules.discard("meaningbench.metrics.neural.__init__")
    assert modules == named, (
        f"not a metric (move it to support/): {sorted(modules - named)}; "
        f"named but missing: {sorted(named - modules)}"
    )
    support = {p.stem for p in SUPPORT.glob("*.py")} - {"__init__"}
    assert support, "metrics/neural/support/ holds nothing"
    for path in SUPPORT.glob("*.py"):
        metrics = [c for c, bases in _classes(path) if c.endswith("Metric") and bases]
        concrete = [c for c in metrics if not _is_base(path, c)]
        assert not concrete, f"{_name(path)} holds a metric: {concrete}"


def _is_base(path: Path, cls: str) -> bool:
    """A metric base class that other metrics extend (NeuralMetric, ClozeMetric)."""
    return any(
        cls in bases
        for other in [*NEURAL.glob("*.py"), *SUPPORT.glob("*.py")]
        for _, bases in _classes(other)
    )


def test_every_folder_of_modules_is_a_package() -> None:
    folders = {p.parent for base in FOLDERS for p in _modules(base)}
    bare = sorted(_name(f) for f in folders if not (f / "__init__.py").exists())
    assert not bare, f"folders of modules without an __init__.py: {bare}"


def test_the_checks_catch_what_breaks_them(tmp_path: Path) -> None:
    flat = tmp_path / "flat.py"
    flat.write_text(
        "class ExportPage(QWidget): ...\nclass Ask(QtWidgets.QDialog): ...\n", encoding="utf-8"
    )
    assert pages(flat) == ["ExportPage"] and dialogs(flat) == ["Ask"]
    assert _page_breaks(flat)  # not at ui/<area>/page.py
    assert _name_breaks(Path("app/ui/export_dialog.py"))
    assert not _name_breaks(Path("app/ui/dialogs/export.py"))
    assert _dialog_breaks(flat, ui=tmp_path)  # among the window's own modules
    assert not _dialog_breaks(UI / "dialogs" / "kits.py")
