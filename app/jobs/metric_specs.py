"""Metric specs as the command line and the battery dialog write them, and the configured
metrics they stand for.

A spec is `NAME`, `NAME[option=value,...]`, `NAME@MODEL` (a model registered in the study:
the metric runs with `model=<its path>` and is named `NAME@MODEL`) or both, e.g.
`bleu[lowercase]`, `sari[item_variant=easse,deletion=precision]`, `meaningbert@my-model`,
`bertscore[refs=references]` (`refs` is short for `reference_mode`). This is the one parser;
`meaningbench.metrics.names` prints the canonical form every table and export shows.
`all` stands for every available metric plus one entry per registered model.

The common options (reference_mode, device, model, batch_size) reach each metric that
declares them in its `defaults`; a metric ignores the others. Options written in a spec win.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from meaningbench.errors import InputError
from meaningbench.metrics.base import Availability, Metric
from meaningbench.metrics.model_roles import metrics_for_model
from meaningbench.metrics.names import OPTION_ALIASES, metric_canonical_name
from meaningbench.metrics.registry import get_metric_class, metric_classes
from meaningbench.settings import resolve_model_path

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


@dataclass(frozen=True)
class RegisteredModelRef:
    name: str
    metric: str
    path: str


@dataclass
class PlannedMetric:
    """A spec turned into a configured metric, or the reason it cannot run."""

    spec: MetricSpec
    metric: Metric | None  # None when it could not even be configured
    label: str
    availability: Availability

    @property
    def name(self) -> str:
        return self.metric.name if self.metric is not None else self.spec.name


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


def metric_config(
    cls: type[Metric], options: Mapping[str, Any], spec_options: Mapping[str, Any]
) -> dict[str, Any]:
    """Common options the metric declares (None = leave the default), then the spec's own."""
    config = {k: v for k, v in options.items() if k in cls.defaults and v is not None}
    config.update(spec_options)
    return config


def plan_metric(
    spec: MetricSpec,
    options: Mapping[str, Any],
    registered: Mapping[str, RegisteredModelRef],
    *,
    check_availability: bool = True,
) -> PlannedMetric:
    """Build the metric a spec names; unknown names and options are the user's mistake."""
    try:
        cls = get_metric_class(spec.name)
    except KeyError as exc:  # unknown, or an installed plugin that fails to load
        raise InputError(str(exc.args[0])) from None
    config = metric_config(cls, options, spec.options)
    if spec.model is not None:
        ref = registered.get(spec.model)
        if ref is None:
            names = ", ".join(sorted(registered)) or "none"
            raise InputError(
                f"{spec.text}: no model named {spec.model!r} is registered in this study "
                f"(registered: {names})"
            )
        if "model" not in cls.defaults:
            raise InputError(f"{spec.text}: the metric {spec.name!r} does not take a model")
        _check_model_serves(spec, ref)
        config["model"] = resolve_model_path(ref.path)
    unknown = sorted(set(spec.options) - set(cls.defaults))
    if unknown:
        raise InputError(
            f"{spec.text}: unknown option(s) {', '.join(unknown)} for {spec.name}; "
            f"known: {', '.join(sorted(cls.defaults)) or 'none'}"
        )
    try:
        metric = cls(**config)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{spec.text or spec.name}: {exc}") from exc
    label = metric_canonical_name(metric, spec.model)
    if not check_availability:
        return PlannedMetric(spec, metric, label, Availability(True))
    try:
        availability = metric.availability()
    except Exception as exc:  # an availability check that breaks is an unavailable metric
        availability = Availability(False, f"{type(exc).__name__}: {exc}")
    return PlannedMetric(spec, metric, label, availability)


def _check_model_serves(spec: MetricSpec, ref: RegisteredModelRef) -> None:
    served = metrics_for_model(ref.metric)
    if spec.name not in served:
        raise InputError(
            f"{spec.text}: the model {ref.name!r} was registered for {ref.metric}; "
            f"it runs as {' or '.join(f'{m}@{ref.name}' for m in served)}"
        )


def expand_specs(
    texts: Sequence[str], registered: Iterable[RegisteredModelRef]
) -> tuple[list[MetricSpec], bool]:
    """The specs of a request; (specs, whether `all` was asked for)."""
    flat = [s for text in texts for s in split_specs(text)]
    if not flat:
        raise InputError("no metric given; name some (e.g. --metrics bleu,sari) or use all")
    if any(s.lower() == "all" for s in flat):
        specs = [MetricSpec(name, text=name, explicit=False) for name in sorted(metric_classes())]
        specs += [
            MetricSpec(metric, ref.name, text=f"{metric}@{ref.name}", explicit=False)
            for ref in registered
            for metric in metrics_for_model(ref.metric)
        ]
        seen = {s.text for s in specs}
        specs += [parse_spec(s) for s in flat if s.lower() != "all" and s not in seen]
        return specs, True
    return [parse_spec(s) for s in flat], False


@dataclass(frozen=True)
class NamedConfig:
    """A metric named by its canonical spec, with the config that spec stands for."""

    name: str  # canonical, as every table prints it
    metric: str
    config: dict[str, Any]


def configured_names(
    texts: Sequence[str], registered: Iterable[RegisteredModelRef]
) -> list[NamedConfig]:
    """Metric names as users write them (`bleu`, `bertscore[refs=references,idf=true]`,
    `meaningbert@MODEL`), checked and configured by the one parser; `all` is not allowed
    here (these commands run what they are given)."""
    refs = {r.name: r for r in registered}
    flat = [s for text in texts for s in split_specs(text)]
    if not flat:
        raise InputError("no metric given")
    out: list[NamedConfig] = []
    for text in flat:
        spec = parse_spec(text)
        planned = plan_metric(spec, {}, refs, check_availability=False)
        assert planned.metric is not None
        metric = planned.metric
        out.append(NamedConfig(planned.label, metric.name, dict(metric.config)))
    return out
