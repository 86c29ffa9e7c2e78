"""The one printer of metric names: the canonical spec of a configured metric.

A stored run is named by the spec that configures it again: the metric's name, `@MODEL`
for a model registered in the study, and in brackets every option whose value differs from
the metric's default — plus the reference mode of every metric that has one, written
`refs=source` or `refs=references`, so a column always says what its scores were compared
with. `meaningbench.jobs.metric_specs.parse_spec` is the one parser; a printed name parses back to
the same configuration, so any name a table, an export or a report shows is accepted by
every command that takes metric names and selects the same scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

# Short option names a spec may use; the printer writes the short form.
OPTION_ALIASES = {"refs": "reference_mode"}
_PRINTED = {full: short for short, full in OPTION_ALIASES.items()}


def option_value_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


def canonical_name(
    metric: str,
    config: Mapping[str, Any],
    defaults: Mapping[str, Any],
    *,
    runtime_options: frozenset[str] = frozenset(),
    model_name: str | None = None,
) -> str:
    """`metric[@MODEL][opt=value,...]` for a run's stored config (see the module docstring)."""
    parts: list[str] = []
    if "reference_mode" in defaults:
        mode = config.get("reference_mode", defaults["reference_mode"])
        parts.append(f"refs={option_value_text(mode)}")
    for key in sorted(config):
        if key == "reference_mode" or key in runtime_options or key not in defaults:
            continue
        if model_name is not None and key == "model":
            continue
        value = config[key]
        if value == defaults[key]:
            continue
        parts.append(f"{_PRINTED.get(key, key)}={option_value_text(value)}")
    name = metric if model_name is None else f"{metric}@{model_name}"
    return f"{name}[{','.join(parts)}]" if parts else name


def metric_canonical_name(metric_obj: Any, model_name: str | None = None) -> str:
    """The canonical name of a configured `Metric`."""
    cls = type(metric_obj)
    return canonical_name(
        metric_obj.name,
        metric_obj.config,
        cls.defaults,
        runtime_options=cls.runtime_options,
        model_name=model_name,
    )
