"""The screens hold values: what `queries` and `ops` hand to `meaningbench.ui` is no
stateful engine object.

Every name a module of `meaningbench.ui` imports from `meaningbench.queries` or
`meaningbench.ops` is resolved (through `if TYPE_CHECKING:` imports too), and so are the
return types of the functions among them (through `Job[...]`, `Wrote[...]`, lists and
optionals). Each class met must be one of:
- a value: a frozen dataclass, an enum, a NamedTuple or tuple, a TypedDict, an exception,
  a Protocol;
- a class of the screens' own layers (queries, ops, runtime, core, settings) that is not a
  dataclass: a reader or a view state made for the screens (`BrowserReader`,
  `DashboardState`);
- named below: STATEFUL for an engine object with behaviour (each with why it still
  crosses), MUTABLE for a result record that is a dataclass but not frozen.
A new crossing fails until it is a value or named here; a name here that no longer
crosses fails too, so the lists only shrink.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import inspect
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

UI = Path(__file__).resolve().parents[1] / "app" / "ui"
ASKED = ("meaningbench.queries", "meaningbench.ops")
SCREEN_LAYERS = (
    "meaningbench.queries",
    "meaningbench.ops",
    "meaningbench.runtime",
    "meaningbench.core",
    "meaningbench.settings",
)

# Engine objects with behaviour that the screens still hold. (The rating screens hold a
# read-only cursor over the rater's queue, `queries.rating_cursor`, not the engine's
# sessions: the ops write through the session behind it.)
STATEFUL = {
    # Opening or creating a study answers with the open study; the screens hold it as a
    # `queries.files.StudyHandle` (path, read-only, close) and hand it back to the queries.
    "meaningbench.db.study.Study": "the open study behind a StudyHandle",
}

# Records that are dataclasses but not frozen. The screens build the settings afresh from
# their widgets, but the engine edits loaded settings field by field (protocol presets, kit
# making, the dialog's per-section save) and so do many tests. The training monitor and its
# curves are fed event by event on the GUI thread while a training job runs. An import, a
# merge and an export count into their reports as they go (a frozen twin of each report
# would repeat every field; the screens only read them).
MUTABLE = {
    "meaningbench.annotation.merge.MergeReport",
    "meaningbench.annotation.settings.AnnotationSettings",
    "meaningbench.annotation.settings.DimensionConfig",
    "meaningbench.datasets.exporters.ExportReport",
    "meaningbench.datasets.report.ImportReport",
    "meaningbench.queries.training_progress.RunCurves",
    "meaningbench.queries.training_progress.TrainingMonitor",
}


def _asked(module: str | None) -> bool:
    return module is not None and any(module == a or module.startswith(a + ".") for a in ASKED)


def _imported() -> Iterator[tuple[str, str, str]]:
    """(importing file, module, name) of every name the screens take from queries or ops;
    a module taken whole gives the names the file reads from it."""
    for path in sorted(UI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        whole: dict[str, str] = {}  # local alias -> module
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and _asked(node.module)):
                continue
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if importlib.util.find_spec(full) if _is_package(node.module) else False:
                    whole[alias.asname or alias.name] = full
                else:
                    yield str(path), str(node.module), alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in whole
            ):
                yield str(path), whole[node.value.id], node.attr


def _is_package(module: str | None) -> bool:
    return module is not None and hasattr(importlib.import_module(module), "__path__")


def _namespace(module: ModuleType) -> dict[str, Any]:
    """The module's globals and the names it imports only for type checking."""
    names = dict(vars(module))
    source = inspect.getsource(module)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and sub.module:
                    imported = importlib.import_module(sub.module)
                    for alias in sub.names:
                        value = getattr(imported, alias.name, None)
                        if value is None:
                            value = _resolve(sub.module, alias.name)
                        names[alias.asname or alias.name] = value
    return names


def _resolve(module_name: str, name: str) -> Any:
    module = importlib.import_module(module_name)
    if hasattr(module, name):
        return getattr(module, name)
    return _namespace(module).get(name)


def _classes(hint: Any) -> Iterator[type]:
    """The classes a type hint names, through generics and unions."""
    origin = typing.get_origin(hint)
    if origin is None and isinstance(hint, type):
        yield hint
    elif origin is not None:
        if isinstance(origin, type) and origin.__module__.startswith("meaningbench"):
            yield origin
        for arg in typing.get_args(hint):
            if isinstance(arg, list):  # Callable's parameters
                continue
            yield from _classes(arg)


def _returned(function: Any) -> Iterator[type]:
    module = importlib.import_module(function.__module__)
    hints = typing.get_type_hints(function, globalns=_namespace(module))
    yield from _classes(hints.get("return"))


def _crossing() -> dict[str, set[str]]:
    """Each meaningbench class that reaches the screens, with the files it reaches."""
    found: dict[str, set[str]] = {}
    for path, module, name in _imported():
        value = _resolve(module, name)
        assert value is not None, f"{path}: {module}.{name} does not resolve"
        if isinstance(value, type):
            classes: list[type] = [value]
        elif inspect.isfunction(value):
            classes = list(_returned(value))
        else:
            continue
        for cls in classes:
            if cls.__module__.startswith("meaningbench."):
                found.setdefault(f"{cls.__module__}.{cls.__qualname__}", set()).add(path)
    return found


def _kind(cls: type) -> str:
    """'value', 'screen' (a layer's own reader or view state), 'mutable' or 'stateful'."""
    if f"{cls.__module__}.{cls.__qualname__}" in STATEFUL:
        return "stateful"
    if dataclasses.is_dataclass(cls):
        return "value" if cls.__dataclass_params__.frozen else "mutable"  # type: ignore[attr-defined]
    if issubclass(cls, (enum.Enum, tuple, BaseException)) or typing.is_typeddict(cls):
        return "value"
    if getattr(cls, "_is_protocol", False):
        return "value"
    if cls.__module__.startswith(SCREEN_LAYERS):
        return "screen"
    return "stateful"


def _by_kind() -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for name in _crossing():
        module, _, qualname = name.rpartition(".")
        cls = getattr(importlib.import_module(module), qualname)
        kinds.setdefault(_kind(cls), set()).add(name)
    return kinds


def test_no_stateful_engine_object_reaches_the_screens_but_those_named() -> None:
    kinds = _by_kind()
    stateful = kinds.get("stateful", set())
    assert stateful - STATEFUL.keys() == set(), "a new stateful object reaches the screens"
    assert STATEFUL.keys() - stateful == set(), "no longer crosses: take it off STATEFUL"
    assert "meaningbench.analysis.live.StudyAnalysis" not in stateful


def test_mutable_records_that_reach_the_screens_are_those_named() -> None:
    mutable = _by_kind().get("mutable", set())
    assert mutable - MUTABLE == set(), "a new mutable record reaches the screens: freeze it"
    assert MUTABLE - mutable == set(), "no longer crosses (or frozen): take it off MUTABLE"


def test_the_check_finds_what_the_screens_take() -> None:
    """The walk sees names imported whole-module and under TYPE_CHECKING, and the results
    of jobs: without these it would pass on anything."""
    crossing = _crossing()
    assert "meaningbench.queries.dashboard_state.DashboardState" in crossing
    assert "meaningbench.runtime.changes.StudyChanges" in crossing
    assert "meaningbench.analysis.sanity.SanityTable" in crossing  # Job[SanityTable]
    assert _kind(crossing_class("meaningbench.analysis.live.StudyAnalysis")) == "stateful"
    assert _kind(crossing_class("meaningbench.queries.dashboard_state.Redraw")) == "value"


def crossing_class(name: str) -> type:
    module, _, qualname = name.rpartition(".")
    cls = getattr(importlib.import_module(module), qualname)
    assert isinstance(cls, type)
    return cls
