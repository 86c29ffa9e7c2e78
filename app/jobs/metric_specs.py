"""Metric specs as the command line and the battery dialog write them, and the configured
metrics they stand for.

A spec is `NAME`, `NAME[option=value,...]`, `NAME@MODEL` (a model registered in the study:
the metric runs with `model=<its path>` and is named `NAME@MODEL`) or both, e.g.
`bleu[lowercase]`, `sari[item_variant=easse,deletion=precision]`, `meaningbert@my-model`,
`bertscore[refs=references]` (`refs` is short for `reference_mode`).
`meaningbench.metrics.names` reads them (the one parser) and prints the canonical form every
table and export shows (the one printer).
`all` stands for every available metric plus one entry per registered model.

The common options (reference_mode, device, model, batch_size) reach each metric that
declares them in its `defaults`; a metric ignores the others. Options written in a spec win.
The `study` option (a path) is not a metric's: each metric reads that study through
`meaningbench.jobs.study_inputs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from meaningbench.errors import InputError
from meaningbench.metrics.base import Availability, Metric
from meaningbench.metrics.model_roles import metrics_for_model
from meaningbench.metrics.names import MetricSpec, metric_canonical_name, parse_spec, split_specs
from meaningbench.metrics.registry import get_metric_class, metric_classes
from meaningbench.settings import resolve_model_path


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
    if options.get("study"):
        # The metric reads the study only through what the job hands it.
        from meaningbench.jobs.study_inputs import StudyFileInputs

        metric.use_study(StudyFileInputs(str(options["study"])))
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
