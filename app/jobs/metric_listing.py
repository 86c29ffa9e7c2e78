"""What the battery offers: every metric with whether it can run here and why not, every
installed plugin that failed to load, and every model registered in a study, one
`MetricListing` each.

The battery dialog lists them (the child process that imports every metric library builds
them, so the class crosses back pickled: the module imports nothing heavy until a listing
is built) and `meaningbench metrics` prints them, its `--json` as `MetricListing.to_dict()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from meaningbench.jobs.metric_specs import RegisteredModelRef
    from meaningbench.metrics.base import Metric
    from meaningbench.metrics.registry import BrokenPlugin

# What the battery says of a metric that "all" leaves out without saying why.
RUNS_ONLY_WHEN_NAMED = "runs only when named"


@dataclass(frozen=True)
class MetricListing:
    """One metric the battery offers (a metric, a broken plugin or a registered model)."""

    name: str  # the spec that runs it (`--metrics NAME`)
    label: str
    family: str
    needs_references: bool
    needs_model: bool
    available: bool
    status: str  # `Availability.status`: available, needs weights, needs an extra…
    reason: str
    # The option, command or variable that makes an unavailable metric available.
    fix: str
    description: str
    options: Mapping[str, Any] = field(default_factory=dict)  # the metric's defaults
    package: str = ""  # the distribution it comes from ("study": a registered model)
    origin: str = ""  # that package, its version and the module
    # What runs the model of a neural metric, on its default device: "onnx (ONNX Runtime,
    # CPU)", or "torch (why not ONNX Runtime)"; "" for a metric without that choice.
    backend: str = ""
    # Whether "all" runs it and, when not, why. Only an installed metric says; a broken
    # plugin or a registered model leaves it None (and `to_dict` leaves both keys out).
    in_all: bool | None = None
    not_in_all_why: str = ""

    @property
    def runs_in_all(self) -> bool:
        """Whether "all" (the battery's "All available") takes it, when it is available."""
        return self.in_all is not False

    def to_dict(self) -> dict[str, Any]:
        """The `meaningbench metrics --json` entry."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["options"] = dict(self.options)
        if self.in_all is None:
            del out["in_all"], out["not_in_all_why"]
        return out


def list_metrics(study_path: Path | str | None = None) -> list[MetricListing]:
    """Every installed metric with its availability (under the study's language, given a
    study), every plugin that failed to load, then the models registered in the study."""
    from meaningbench.jobs.score_store import open_existing, study_options
    from meaningbench.metrics.registry import broken_plugins, metric_classes

    study: dict[str, Any] = {}
    if study_path is not None:
        opened = open_existing(Path(study_path))
        try:
            study = study_options(opened)
        finally:
            opened.close()
    out = [installed(name, cls, study) for name, cls in sorted(metric_classes().items())]
    # Listed, so the app and the command say why it is missing.
    out.extend(broken(plugin) for plugin in broken_plugins())
    if study_path is not None:
        out.extend(registered_models(Path(study_path)))
    return out


def installed(name: str, cls: type[Metric], study: Mapping[str, Any]) -> MetricListing:
    """A loaded metric, configured with what it would learn of the study (its language): a
    metric defined for English only is unavailable in a German study, and says why."""
    from meaningbench.jobs.score_exec import describe
    from meaningbench.metrics.base import Availability
    from meaningbench.metrics.registry import metric_origin

    backend = ""
    try:
        metric = cls(**{k: v for k, v in study.items() if k in cls.defaults})
        availability = metric.availability()
        if availability.ok:
            backend = runs_on(metric)
    except Exception as exc:
        availability = Availability(False, describe(exc))
    origin = metric_origin(name)
    return MetricListing(
        name=name,
        label=cls.info.label,
        family=cls.info.family,
        needs_references=cls.info.needs_references,
        needs_model=cls.info.needs_model,
        available=bool(availability.ok),
        status=availability.status(),
        reason=availability.reason or "",
        fix=availability.fix,
        description=cls.info.description,
        options=dict(cls.defaults),
        package=origin.distribution,
        origin=origin.describe(),
        in_all=cls.in_all,
        not_in_all_why="" if cls.in_all else cls.not_in_all_why or RUNS_ONLY_WHEN_NAMED,
        backend=backend,
    )


def runs_on(metric: Metric) -> str:
    """The backend a neural metric with the choice runs on, described; "" for the others."""
    from meaningbench.metrics.neural.support.common import NeuralMetric

    if not isinstance(metric, NeuralMetric) or "backend" not in metric.defaults:
        return ""
    return metric.backend().describe()


def broken(plugin: BrokenPlugin) -> MetricListing:
    """An installed plugin's metric that failed to load: never available, and why."""
    return MetricListing(
        name=plugin.name,
        label=plugin.name,
        family="plugin",
        needs_references=False,
        needs_model=False,
        available=False,
        status="unavailable",
        reason=f"the plugin failed to load ({plugin.module}): {plugin.error}",
        fix="",
        description=f"a metric of {plugin.distribution} that failed to load",
        package=plugin.distribution,
        origin=f"{plugin.distribution} ({plugin.module})",
    )


def registered_models(study_path: Path) -> list[MetricListing]:
    """One listing per metric each model registered in the study serves."""
    from meaningbench.jobs.score_store import open_existing
    from meaningbench.jobs.score_store import registered_models as refs_of
    from meaningbench.metrics.model_roles import metrics_for_model

    study = open_existing(study_path)
    try:
        refs = refs_of(study)
    finally:
        study.close()
    served = [(ref, metric) for ref in refs for metric in metrics_for_model(ref.metric)]
    return [_registered(ref, metric, study_path) for ref, metric in served]


def _registered(ref: RegisteredModelRef, metric: str, study_path: Path) -> MetricListing:
    from meaningbench.metrics.registry import metric_classes
    from meaningbench.settings import resolve_model_path

    model_cls = metric_classes().get(metric)
    path = resolve_model_path(ref.path)
    if model_cls is None:
        ok, reason = False, f"the metric {metric!r} is not installed"
    elif not Path(path).exists():
        ok, reason = False, f"the model folder {path} is missing"
    else:
        ok, reason = True, ""
    # The same question the installed metrics answer, asked of the metric on this model.
    backend = _runs_on_model(model_cls, path) if ok and model_cls is not None else ""
    return MetricListing(
        name=f"{metric}@{ref.name}",
        label=ref.name if metric == ref.metric else f"{ref.name} ({metric})",
        family="trained",
        needs_references=bool(model_cls and model_cls.info.needs_references),
        needs_model=True,
        available=ok,
        status="available" if ok else "unavailable",
        reason=reason,
        fix="",
        description=f"{metric} with the registered model {ref.name}",
        options={"model": path},
        package="study",
        origin=f"a model registered in {study_path.name}",
        backend=backend,
    )


def _runs_on_model(cls: type[Metric], path: str) -> str:
    """`runs_on` of the metric configured with a registered model, as a battery runs it
    (`model=<its path>`); "" when the metric cannot even be configured so."""
    try:
        metric = cls(model=path)
    except Exception:  # its row already says whether it can run; the backend stays unsaid
        return ""
    return runs_on(metric)
