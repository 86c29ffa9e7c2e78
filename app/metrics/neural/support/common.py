"""What the neural metrics share: the model options, availability, versions, device, config hash.

Options that do not change a score (device, batch size, cache sizes) stay out of the config
hash, so moving a study from a laptop to a GPU server keeps its cached scores valid.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, ClassVar

from meaningbench.errors import UserError
from meaningbench.metrics.base import Availability, Metric, Pair
from meaningbench.metrics.explain import ExplainItem, Explanation, unexplained
from meaningbench.metrics.neural.support.models import (
    LoadedModel,
    Precision,
    effective_precision,
    load_model,
    model_availability,
    resolve_device,
    resolve_model,
)
from meaningbench.metrics.neural.support.onnx_encoder import (
    BACKEND_OPTION,
    Backend,
    BackendPlan,
    ensure_export,
    export_ready,
    failure_note,
    light_model,
    plan_backend,
)
from meaningbench.metrics.neural.support.quantize import (
    QUANTIZE_OPTION,
    Quantize,
    quantize_device_problem,
)
from meaningbench.metrics.neural.support.token_matching import ran_on
from meaningbench.settings import DEFAULT_ENCODER, Device

MODEL_OPTIONS: dict[str, Any] = {"device": "auto", "batch_size": 64, "precision": "fp32"}
# The options of metrics whose model is a plain transformer encoder (BERTScore, SBERT
# cosine, the cross-encoders): `quantize`, added after scores existed, is hashed only when
# set (`hashed_when_set`), so float runs keep their config hash; `backend` enters the hash
# as the backend that runs, and only when that is ONNX Runtime (see `score_config`).
ENCODER_OPTIONS: dict[str, Any] = {**MODEL_OPTIONS, **QUANTIZE_OPTION, **BACKEND_OPTION}


class NeuralMetric(Metric):
    """A metric that runs a transformer; `model_kind` says which head it loads."""

    model_kind: ClassVar[str] = "encoder"
    batches_itself: ClassVar[bool] = True
    runtime_options: ClassVar[frozenset[str]] = frozenset(
        {"device", "batch_size", "embedding_cache_mb"}
    )
    model_option: ClassVar[str] = "model"
    option_types: ClassVar[dict[str, Any]] = {
        "device": Device,
        "precision": Precision,
        "quantize": Quantize,  # typed for the metrics that have it (ENCODER_OPTIONS)
        "backend": Backend,
    }
    _plan: BackendPlan | None = None

    def onnx_part(self) -> str | None:
        """The part of the model ONNX Runtime would run (see onnx_encoder), or None for a
        metric that runs torch only."""
        return None

    def backend(self) -> BackendPlan:
        """The backend the forward passes run on (cheap: nothing is exported here)."""
        if self._plan is None:
            self._plan = self._planned()
        return self._plan

    def _planned(self) -> BackendPlan:
        if "backend" not in self.defaults:
            return BackendPlan("torch")
        asked = self.config.get("backend")
        try:
            ref = resolve_model(self.model_name())
            if not ref.is_local and ref.revision is None:
                # Not downloaded yet: its type and layers are unknown until the run
                # downloads it (`ready_backend`); nothing here may reach the network.
                return BackendPlan(
                    "torch", "until the model is downloaded: the run decides then", True
                )
            part = self.onnx_part()
        except UserError as exc:
            return BackendPlan("torch", str(exc))
        device = self.device()
        if part is None or device is None:
            return BackendPlan("torch", "no ONNX export for this model" if device else "")
        if effective_precision(str(self.config.get("precision")), device) != "fp32":
            return BackendPlan("torch", "half precision runs in torch")
        return plan_backend(None if asked is None else str(asked), ref, part, device,
                            self.quantize())  # fmt: skip

    def ready_backend(self) -> BackendPlan:
        """Export the model's part now when ONNX Runtime is to run it (before the config is
        hashed, so a failed export is hashed as the torch run it becomes)."""
        plan = self.backend()
        if plan.pending:  # the job downloads the model now, and the plan is made on it
            self.loaded()
            self._plan = None
            plan = self.backend()
        part = self.onnx_part()
        # An export in place is checked by its hash when its session is built; only a
        # missing one needs the torch model now.
        if plan.name == "onnx" and part is not None and not self._export_in_place(part):
            loaded = self.loaded()
            if not ensure_export(loaded, part):
                why = failure_note(loaded.ref, part) or "unknown error"
                self._plan = BackendPlan("torch", f"the ONNX export failed: {why}")
        return self.backend()

    def _export_in_place(self, part: str) -> bool:
        try:
            return export_ready(resolve_model(self.model_name()), part)
        except UserError:
            return False

    def scoring_model(self) -> LoadedModel:
        """The record the scores are computed with: one without torch where ONNX Runtime
        runs the whole forward pass on the CPU from an export in place (see
        `onnx_encoder.light_model`), else `loaded()`."""
        # Exported first when it is not yet (and a hub model downloaded), so that the run
        # that exports computes its scores as every later one does.
        plan = self.ready_backend()
        part = self.onnx_part()
        if part is not None and plan.name == "onnx" and self.device() == "cpu":
            light = light_model(resolve_model(self.model_name()), part)
            if light is not None:
                return light
        return self.loaded()

    def explain(self, item: ExplainItem) -> Explanation:
        """No view of the parts of the score; which backend computed the stored one."""
        if "backend" not in self.defaults or item.details is None:
            return super().explain(item)
        return unexplained(
            self.info.label,
            f"its score is not built from parts one can show ({ran_on(item.details)})",
        )

    def prepare(self, pairs: Iterable[Pair]) -> None:
        self.ready_backend()

    def score_config(self) -> dict[str, Any]:
        cfg = super().score_config()
        if "backend" in self.defaults:
            # Torch runs keep the hash they had before the option; ONNX runs have their own.
            cfg.pop("backend", None)
            if self.backend().name == "onnx":
                cfg["backend"] = "onnx"
        return cfg

    def model_name(self) -> str | None:
        value = self.config.get(self.model_option)
        return str(value) if value else None

    def availability(self) -> Availability:
        name = self.model_name()
        # The spec that supplies weights, as `metrics` and the Run metrics dialog print it.
        fix = f"{self.name}[{self.model_option}=PATH_OR_HUB_ID]"
        if not name:
            return Availability(
                False, f"{self.info.label} needs a model ({self.model_option})", "weights", fix
            )
        found = model_availability(name)
        if not found.ok:
            return Availability(False, found.reason, "weights", fix)
        if self.quantize():
            problem = quantize_device_problem(str(self.config.get("device", "auto")))
            if problem is not None:
                return Availability(False, problem)
        return found

    def loaded(self) -> LoadedModel:
        loaded = load_model(
            self.model_name(),
            self.model_kind,
            str(self.config.get("device", "auto")),
            str(self.config.get("precision", "fp32")),
            self.quantize(),
        )
        if self.backend().name != "onnx":
            return loaded
        # A copy that says ONNX: the model (shared) stays torch's, for the export and config.
        if "onnx" not in loaded.backends:
            loaded.backends["onnx"] = dataclasses.replace(loaded, backend="onnx")
        return loaded.backends["onnx"]

    def quantize(self) -> str | None:
        """`int8` when the metric runs its model's linear layers in dynamic int8, else None."""
        value = self.config.get("quantize")
        return None if value is None else str(value)

    def device(self) -> str | None:
        device = str(self.config.get("device", "auto"))
        if self.quantize() and device == "auto":
            return "cpu"  # int8 runs on the CPU only (see load_model)
        try:
            return resolve_device(device)
        except Exception:
            return None

    def model_id(self) -> str | None:
        name = self.model_name()
        if not name:
            return None
        try:
            ref = resolve_model(name)
        except Exception:
            return name
        return name if name == DEFAULT_ENCODER else ref.location

    def versions(self) -> dict[str, str]:
        # Read from the installed metadata: importing transformers to ask costs a second
        # of CPU, and a BERT encoder runs without it (meaningbench.metrics.neural.support.native_bert);
        # torch too, which an ONNX Runtime run on the CPU need not import.
        out = {"torch": torch_version(), "transformers": installed_version("transformers")}
        device = self.device()
        if device:
            out["precision"] = effective_precision(str(self.config.get("precision")), device)
        if self.quantize():
            out["quantize"] = f"{self.quantize()} (torch dynamic, linear layers)"
        if "backend" in self.defaults:
            out["backend"] = self.backend().describe()
            if self.backend().name == "onnx":
                out["onnxruntime"] = installed_version("onnxruntime")
        try:
            ref = resolve_model(self.model_name())
            if ref.revision:
                out["model_revision"] = ref.revision
        except Exception:
            pass
        return out


def torch_version() -> str:
    """torch's `__version__` (the same string as its installed metadata)."""
    import sys

    torch = sys.modules.get("torch")
    version = getattr(torch, "__version__", None)
    return str(version) if version else installed_version("torch")


def installed_version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"
