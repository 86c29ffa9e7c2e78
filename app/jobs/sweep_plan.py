"""What a model/layer sweep scores: one configuration per model × metric × layer × variant.

A configuration is an ordinary metric spec — `bertscore[model=…,layer=…,idf=…]` — so the
sweep stores exactly the run a separate `meaningbench score` of that spec would, and finds
the runs such a command stored before. Options are checked here, before anything loads:
an unknown metric, a layer a model does not have, an idf corpus that is not there are the
user's mistakes and say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meaningbench.errors import InputError, UserError
from meaningbench.metrics.neural.bertscore import num_layers_from_config
from meaningbench.metrics.neural.support.idf_corpus import IDF_CORPORA
from meaningbench.settings import DEFAULT_ENCODER

SWEEP_METRICS = ("bertscore", "sbert_cosine")
# Characters a model name cannot hold inside a metric spec.
_SPEC_CHARS = (",", "[", "]", "=")


@dataclass(frozen=True)
class SweepConfig:
    """One configuration of a sweep. `idf` is None (off), a corpus name or a file path."""

    metric: str
    model: str
    layer: int
    idf: str | None = None
    rescale: bool = False
    reference_mode: str | None = None

    def options(self) -> dict[str, Any]:
        """The metric options, as a `score` spec would give them."""
        # Torch: the sweep encodes every layer in one torch pass (hooks on each layer), so
        # its runs are torch runs, stored as a separate `score` of the spec would store them.
        opts: dict[str, Any] = {"model": self.model, "layer": self.layer, "backend": "torch"}
        if self.metric == "bertscore":
            if self.idf is not None:
                opts["idf"] = True
                opts["idf_from"] = self.idf
            if self.rescale:
                opts["rescale"] = True
            if self.reference_mode is not None:
                opts["reference_mode"] = self.reference_mode
        return opts

    @property
    def spec(self) -> str:
        """The spec `meaningbench score --metrics` takes for this configuration."""

        def text(value: Any) -> str:
            return ("true" if value else "false") if isinstance(value, bool) else str(value)

        inner = ",".join(f"{k}={text(v)}" for k, v in self.options().items())
        return f"{self.metric}[{inner}]"

    @property
    def variant(self) -> str:
        """What besides model and layer sets this configuration apart, for tables."""
        if self.metric != "bertscore":
            return "cosine"
        idf = "no idf" if self.idf is None else f"idf: {_idf_label(self.idf)}"
        return f"{idf}, {'rescaled' if self.rescale else 'raw'}"


def _idf_label(idf: str) -> str:
    return idf if idf in IDF_CORPORA else Path(idf).name


@dataclass(frozen=True)
class SweepRequest:
    study_path: Path
    models: list[str] = field(default_factory=lambda: [DEFAULT_ENCODER])
    layers: str = "all"  # all | 1-6 | 2,4 | a mix: 1-3,6
    idf: list[str] = field(default_factory=lambda: ["none"])  # none|sources|...|FILE
    rescale: list[bool] = field(default_factory=lambda: [False])
    metrics: list[str] = field(default_factory=lambda: ["bertscore"])
    # Scoring options for every configuration: device, batch_size, reference_mode.
    options: dict[str, Any] = field(default_factory=dict)


def split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_layers(text: str, n_layers: int, model: str = "") -> list[int]:
    """`all` (1..n), `a-b`, `a,b`, or a mix (`1-3,6`); 0 is the embedding layer."""
    text = text.strip().lower()
    of = f" of {model}" if model else ""
    if text == "all":
        return list(range(1, n_layers + 1))
    layers: list[int] = []
    for part in split_list(text):
        try:
            if "-" in part:
                low, high = (int(p) for p in part.split("-", 1))
                if low > high:
                    raise UserError(f"layers: {part!r} runs backwards; write {high}-{low}")
                layers.extend(range(low, high + 1))
            else:
                layers.append(int(part))
        except ValueError as exc:
            raise UserError(
                f"layers: {part!r} is not a layer number or range (all, 1-6, 2,4)"
            ) from exc
    if not layers:
        raise UserError("layers: give all, a range such as 1-6, or a list such as 2,4")
    bad = [layer for layer in layers if not 0 <= layer <= n_layers]
    if bad:
        raise UserError(
            f"layers: {', '.join(map(str, bad))} out of range{of}: it has layers 0–{n_layers}"
        )
    return sorted(dict.fromkeys(layers))


def parse_idf(values: Sequence[str]) -> list[str | None]:
    """`none` → None; a corpus name as is; anything else must be a readable text file."""
    out: list[str | None] = []
    for value in values:
        low = value.strip().lower()
        if low in ("none", "off", "no"):
            out.append(None)
        elif low in IDF_CORPORA:
            out.append(low)
        else:
            path = Path(value.strip()).expanduser()
            if not path.is_file():
                raise UserError(
                    f"idf: {value!r} is none, {', '.join(IDF_CORPORA)} or a text file, "
                    "and no such file exists"
                )
            out.append(str(path.resolve()))
    return list(dict.fromkeys(out)) or [None]


def parse_rescale(values: Sequence[str]) -> list[bool]:
    out: list[bool] = []
    for value in values:
        low = value.strip().lower()
        if low in ("on", "true", "yes"):
            out.append(True)
        elif low in ("off", "false", "no"):
            out.append(False)
        else:
            raise UserError(f"rescale: {value!r} is neither on nor off (on, off, or on,off)")
    return list(dict.fromkeys(out)) or [False]


def plan_sweep(request: SweepRequest) -> list[SweepConfig]:
    """Every configuration of the sweep, model by model, layer by layer."""
    metrics = [m.strip().lower() for m in request.metrics if m.strip()]
    unknown = [m for m in metrics if m not in SWEEP_METRICS]
    if unknown or not metrics:
        raise InputError(
            f"metrics: {', '.join(unknown) or 'none given'}; a sweep scores "
            f"{' and '.join(SWEEP_METRICS)}"
        )
    if not request.models:
        raise UserError("models: name at least one model (a Hugging Face id or a folder)")
    mode = request.options.get("reference_mode")
    idfs = parse_idf(request.idf)
    rescales = list(dict.fromkeys(request.rescale)) or [False]
    configs: list[SweepConfig] = []
    for model in dict.fromkeys(m.strip() for m in request.models if m.strip()):
        if any(c in model for c in _SPEC_CHARS):
            raise UserError(f"model {model!r}: a model name cannot contain , [ ] or =")
        layers = parse_layers(request.layers, num_layers_from_config(model), model)
        for metric in dict.fromkeys(metrics):
            for layer in layers:
                if metric == "sbert_cosine":
                    configs.append(SweepConfig(metric, model, layer))
                    continue
                for idf in idfs:
                    for rescale in rescales:
                        configs.append(SweepConfig(metric, model, layer, idf, rescale, mode))
    return configs
