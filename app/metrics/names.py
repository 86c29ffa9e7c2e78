"""The one parser and the one printer of metric specs (`NAME`, `NAME[option=value,...]`,
`NAME@MODEL`): what a user writes, and the canonical spec of a configured metric.

A stored run is named by the spec that configures it again: the metric's name, `@MODEL`
for a model registered in the study, and in brackets every option whose value differs from
the metric's default — plus the reference mode of every metric that has one, written
`refs=source` or `refs=references`, so a column always says what its scores were compared
with. `parse_spec` reads a spec; a printed name parses back to the same configuration, so
any name a table, an export or a report shows is accepted by every command that takes
metric names and selects the same scores.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from meaningbench.errors import InputError

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


_SPEC = re.compile(
    r"^(?P<name>[A-Za-z0-9_.\-]+)(?:@(?P<model>[^\[\]]+?))?(?:\[(?P<options>[^\[\]]*)\])?$"
)


@dataclass(frozen=True)
class MetricSpec:
    name: str
    model: str | None = None  # a registered model's name
    options: dict[str, Any] = field(default_factory=dict)
    text: str = ""  # as written
    explicit: bool = True  # False for the entries `all` stands for


def name_and_options(spec: str) -> tuple[str, str]:
    """A printed spec cut before its options: (`bleu`, `[refs=source]`) — a narrow column
    shows them on two lines — and (`sbert_cosine`, "") for a spec without any."""
    head, bracket, rest = spec.partition("[")
    return head, bracket + rest


def split_specs(text: str) -> list[str]:
    """Split `a,b[x=1,y=2],c` on the commas outside brackets."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    out.append("".join(current).strip())
    return [s for s in out if s]


def _parse_value(raw: str) -> Any:
    text = raw.strip()
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def parse_spec(text: str) -> MetricSpec:
    match = _SPEC.match(text.strip())
    if not match:
        raise InputError(
            f"cannot read the metric {text!r}; write NAME, NAME[option=value,...] or NAME@MODEL"
        )
    options: dict[str, Any] = {}
    for part in re.split(r"[,;]", match.group("options") or ""):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = OPTION_ALIASES.get(key.strip(), key.strip())
        if sep:
            options[key] = _parse_value(value)
        elif key.startswith("no-"):
            options[key[3:]] = False
        else:
            options[key] = True
    model = match.group("model")
    return MetricSpec(match.group("name").lower(), model.strip() if model else None, options, text)
