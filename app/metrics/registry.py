"""Find metric classes by name. Families register themselves when their package is imported.

Importing a family must stay cheap: neural families import torch inside their methods.
"""

from __future__ import annotations

import importlib
from typing import Any

from meaningbench.metrics.base import Metric

FAMILY_PACKAGES = (
    "meaningbench.metrics.lexical",
    "meaningbench.metrics.neural",
    "meaningbench.metrics.structural",
)

_REGISTRY: dict[str, type[Metric]] = {}
_loaded = False


def register(cls: type[Metric]) -> type[Metric]:
    name = cls.info.name
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"two metrics are named {name!r}")
    _REGISTRY[name] = cls
    return cls


def unregister(name: str) -> None:
    """Forget a metric (tests register throw-away metrics and must not leak them)."""
    _REGISTRY.pop(name, None)


def _load_families() -> None:
    global _loaded
    if _loaded:
        return
    for package in FAMILY_PACKAGES:
        importlib.import_module(package)
    _loaded = True


def metric_classes() -> dict[str, type[Metric]]:
    _load_families()
    return dict(_REGISTRY)


def get_metric_class(name: str) -> type[Metric]:
    classes = metric_classes()
    key = name.strip().lower()
    if key not in classes:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(sorted(classes))}")
    return classes[key]


def create_metric(name: str, **config: Any) -> Metric:
    return get_metric_class(name)(**config)
