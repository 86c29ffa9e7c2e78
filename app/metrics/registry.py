"""Find metric classes by name: every installed distribution's `meaningbench.metrics` entry
points, plus the classes a program registers itself with `register()`.

A metric is one module holding one `Metric` subclass; an entry point names it:

    [project.entry-points."meaningbench.metrics"]
    bleu = "meaningbench.metrics.lexical.sacrebleu_metrics:BleuMetric"

so the battery shipped here and a lab's own metric in a separate package are found the same
way. Entry points are read once; a metric's module is imported only when that metric is
first asked for (a family's modules import torch inside their methods, never at import). A
plugin that fails to load (an import error, or a module that calls `sys.exit()`), names
itself differently or is not a `Metric` is reported, with its name, module and error, by
`broken_plugins()`; the other metrics keep working.
"""

from __future__ import annotations

import importlib.metadata as md
from dataclasses import dataclass
from typing import Any

from meaningbench.metrics.base import Metric

ENTRY_POINT_GROUP = "meaningbench.metrics"
BUILT_IN = "meaningbench"  # the distribution whose metrics are the battery itself
REGISTERED = "register()"  # the origin of a class registered by the running program


@dataclass(frozen=True)
class MetricOrigin:
    """Where a metric comes from: a distribution's entry point, or `register()`."""

    distribution: str  # "meaningbench", a plugin's distribution name, or REGISTERED
    version: str
    module: str  # "package.module:Class"

    @property
    def built_in(self) -> bool:
        return self.distribution == BUILT_IN

    def describe(self) -> str:
        if self.distribution == REGISTERED:
            return f"registered by the program ({self.module})"
        return f"{self.distribution} {self.version} ({self.module})".strip()


@dataclass(frozen=True)
class BrokenPlugin:
    """An entry point that does not give a usable metric, and why."""

    name: str  # the entry point's name (the metric name it promised)
    module: str  # the entry point's value, "package.module:Class"
    distribution: str
    error: str

    def describe(self) -> str:
        return f"{self.name} from {self.distribution} ({self.module}): {self.error}"


_REGISTERED: dict[str, type[Metric]] = {}
_LOADED: dict[str, type[Metric]] = {}
_ORIGINS: dict[str, MetricOrigin] = {}
_BROKEN: dict[str, BrokenPlugin] = {}
_entry_points: dict[str, tuple[md.EntryPoint, str, str]] | None = None


def register(cls: type[Metric]) -> type[Metric]:
    """Add a metric class by hand (tests, embedding programs); usable as a decorator."""
    name = cls.info.name
    if name in _REGISTERED and _REGISTERED[name] is not cls:
        raise ValueError(f"two metrics are named {name!r}")
    if name not in _REGISTERED and name in _discovered():
        if _load(name) is cls:  # the installed metric itself: nothing to add
            return cls
        ep, dist, _version = _discovered()[name]
        raise ValueError(f"two metrics are named {name!r}: {dist} declares {ep.value}")
    _REGISTERED[name] = cls
    _ORIGINS[name] = MetricOrigin(REGISTERED, "", f"{cls.__module__}:{cls.__qualname__}")
    return cls


def unregister(name: str) -> None:
    """Forget a registered metric (tests register throw-away metrics and must not leak them)."""
    _REGISTERED.pop(name, None)
    if name not in _LOADED:
        _ORIGINS.pop(name, None)


def _distribution_name(dist: md.Distribution) -> str:
    return str(dist.metadata["Name"] or "unknown")


def _discovered() -> dict[str, tuple[md.EntryPoint, str, str]]:
    """Entry point, distribution and version per metric name, read once per process.

    A name the battery has stays the battery's: another package declaring it is reported
    broken. Two other packages declaring one name are both refused: which of them would run
    must not depend on the order in which Python happens to list them.
    """
    global _entry_points
    if _entry_points is not None:
        return _entry_points
    found: dict[str, tuple[md.EntryPoint, str, str]] = {}
    clashes: dict[str, list[str]] = {}
    seen_dists: set[str] = set()
    for dist in md.distributions():
        # Only entry_points.txt is read of every distribution; the metadata (its name) only
        # of those that declare metrics, so a frozen app needs no other package's metadata.
        declared = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
        if not declared:
            continue
        dist_name = _distribution_name(dist)
        # A distribution visible twice on sys.path (an editable install beside a build
        # folder) is one distribution: its first copy wins, as for imports.
        if dist_name.lower() in seen_dists:
            continue
        seen_dists.add(dist_name.lower())
        for ep in declared:
            entry = (ep, dist_name, str(dist.version or ""))
            if ep.name not in found:
                found[ep.name] = entry
            elif BUILT_IN in (dist_name, found[ep.name][1]):
                if dist_name == BUILT_IN:
                    found[ep.name], entry = entry, found[ep.name]
                _BROKEN[f"{ep.name} ({entry[1]})"] = BrokenPlugin(
                    ep.name, entry[0].value, entry[1], "MeaningBench has a metric of that name"
                )
            else:
                first = found[ep.name]
                clashes.setdefault(ep.name, [f"{first[1]} ({first[0].value})"])
                clashes[ep.name].append(f"{dist_name} ({ep.value})")
    for name, where in clashes.items():
        ep, dist_name, _version = found.pop(name)
        _BROKEN[name] = BrokenPlugin(
            name, ep.value, dist_name, "declared by more than one package: " + "; ".join(where)
        )
    _entry_points = found
    return found


def _load(name: str) -> type[Metric] | None:
    """The class behind one entry point, loaded on first use; None when it is broken."""
    if name in _LOADED:
        return _LOADED[name]
    if name in _BROKEN or name not in _discovered():
        return None
    ep, dist_name, version = _discovered()[name]
    try:
        obj: Any = ep.load()
    except (Exception, SystemExit) as exc:
        # A plugin's import error must not take the battery down, nor a plugin that calls
        # sys.exit() on import end the program without a word. Ctrl+C still goes through.
        _BROKEN[name] = BrokenPlugin(name, ep.value, dist_name, _load_error(exc))
        return None
    error = _check_class(name, obj)
    if error:
        _BROKEN[name] = BrokenPlugin(name, ep.value, dist_name, error)
        return None
    metric: type[Metric] = obj  # _check_class found a Metric subclass
    _LOADED[name] = metric
    _ORIGINS[name] = MetricOrigin(dist_name, version, ep.value)
    return metric


def _load_error(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"SystemExit: its module called sys.exit({exc.code!r}) while loading"
    return f"{type(exc).__name__}: {exc}"


def _check_class(name: str, obj: Any) -> str:
    if not (isinstance(obj, type) and issubclass(obj, Metric)):
        return f"it names {obj!r}, which is not a subclass of meaningbench.metrics.base.Metric"
    info = getattr(obj, "info", None)
    if info is None or getattr(info, "name", None) != name:
        declared = getattr(info, "name", None)
        return f"the entry point is named {name!r} but the class says info.name={declared!r}"
    return ""


def metric_classes() -> dict[str, type[Metric]]:
    """Every metric that loads, by name (loading every plugin's module)."""
    for name in _discovered():
        _load(name)
    return {**_LOADED, **_REGISTERED}


def metric_names() -> set[str]:
    """Every metric name installed or registered, without loading any metric's module."""
    return set(_discovered()) | set(_REGISTERED)


def get_metric_class(name: str) -> type[Metric]:
    key = name.strip().lower()
    if key in _REGISTERED:
        return _REGISTERED[key]
    cls = _load(key)
    if cls is not None:
        return cls
    if key in _BROKEN:
        raise KeyError(f"the metric {name!r} is installed but broken: {_BROKEN[key].describe()}")
    known = ", ".join(sorted(metric_classes()))
    raise KeyError(f"unknown metric {name!r}; known: {known}")


def create_metric(name: str, **config: Any) -> Metric:
    return get_metric_class(name)(**config)


def metric_origin(name: str) -> MetricOrigin:
    """Where a loaded metric comes from (KeyError for a name that is not loaded)."""
    get_metric_class(name)
    return _ORIGINS[name.strip().lower()]


def broken_plugins() -> list[BrokenPlugin]:
    """Every entry point that did not give a metric, after trying to load them all."""
    metric_classes()
    return [_BROKEN[name] for name in sorted(_BROKEN)]


def forget_entry_points() -> None:
    """Read the entry points again on next use (after installing a plugin at run time)."""
    global _entry_points
    _entry_points = None
    for name in list(_LOADED):
        _ORIGINS.pop(name, None)
    _LOADED.clear()
    _BROKEN.clear()
