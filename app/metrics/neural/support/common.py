"""What the neural metrics share: the model options, availability, versions, device, config hash.

Options that do not change a score (device, batch size, cache sizes) stay out of the config
hash, so moving a study from a laptop to a GPU server keeps its cached scores valid.
"""

from __future__ import annotations

from typing import Any, ClassVar

from meaningbench.metrics.base import Availability, Metric
from meaningbench.metrics.neural.support.models import (
    LoadedModel,
    Precision,
    effective_precision,
    load_model,
    model_availability,
    resolve_device,
    resolve_model,
)
from meaningbench.metrics.neural.support.quantize import (
    QUANTIZE_OPTION,
    Quantize,
    quantize_device_problem,
)
from meaningbench.settings import DEFAULT_ENCODER, Device

MODEL_OPTIONS: dict[str, Any] = {"device": "auto", "batch_size": 64, "precision": "fp32"}
# The options of metrics whose model is a plain transformer encoder run by torch (BERTScore,
# SBERT cosine, the cross-encoders): `quantize`, added after scores existed, is hashed only
# when set (`hashed_when_set`), so float runs keep their config hash.
ENCODER_OPTIONS: dict[str, Any] = {**MODEL_OPTIONS, **QUANTIZE_OPTION}


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
    }

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
        return load_model(
            self.model_name(),
            self.model_kind,
            str(self.config.get("device", "auto")),
            str(self.config.get("precision", "fp32")),
            self.quantize(),
        )

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
        import torch

        # Read from the installed metadata: importing transformers to ask costs a second
        # of CPU, and a BERT encoder runs without it (meaningbench.metrics.neural.support.native_bert).
        out = {"torch": torch.__version__, "transformers": installed_version("transformers")}
        device = self.device()
        if device:
            out["precision"] = effective_precision(str(self.config.get("precision")), device)
        if self.quantize():
            out["quantize"] = f"{self.quantize()} (torch dynamic, linear layers)"
        try:
            ref = resolve_model(self.model_name())
            if ref.revision:
                out["model_revision"] = ref.revision
        except Exception:
            pass
        return out


def installed_version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"
