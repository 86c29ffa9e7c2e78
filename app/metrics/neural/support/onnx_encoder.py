"""The encoder's forward pass through ONNX Runtime (`backend=onnx`), torch the fallback.

The encoder metrics (BERTScore, SBERT cosine, MeaningBERT and the cross-encoders) spend
most of their time in the forward pass. ONNX Runtime runs the same float32 graph, with
vectors equal to torch's within 1e-6; it is the default on the CPU wherever the model is a
plain transformer. Its forward passes are about as fast as torch's on the 2-core machine of
tests/benchmarks/bench_cli_onnx.py; what it saves there is torch itself: with the export in
place, a BERT encoder on the CPU is scored without importing torch or loading its weights
(`light_model`), about a fifth of a short run (resources/docs/neural.md).

The graph is exported once per model fingerprint and part (the encoder cut after layer N,
`L<N>`; or a cross-encoder's logits) with torch's tracing exporter, into
`<data folder>/onnx/`. An export is written in a temporary folder, checked against torch on
a padded batch of another shape, and renamed into place whole, with its sha256 beside it;
a file whose hash no longer matches (a disk error, an interrupted copy) is rebuilt before it
is used. An export that fails (an architecture the tracer cannot follow) is remembered by a
`.failed` note beside where it would be, and the metric runs in torch, saying so in one line.

Scores move by rounding only (under 1e-6 on the reference files), yet the backend is part
of a run's config hash when it is ONNX (torch runs keep the hash they had) and of the
embedding caches' names, so vectors of the two never mix.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from meaningbench.core.atomic_file import write_text_atomically
from meaningbench.errors import UserError
from meaningbench.metrics.neural.support.models import (
    NATIVE_ENV,
    ConfigOnly,
    LoadedModel,
    ModelRef,
    layer_view,
    load_model,
)
from meaningbench.settings import data_dir

# None (the default): ONNX Runtime on the CPU where it applies, else torch.
Backend = Literal["torch", "onnx"] | None
BACKEND_OPTION: dict[str, Any] = {"backend": None}
# The model types whose encoders are plain transformer stacks the tracer follows.
PLAIN_TYPES = frozenset(
    {"bert", "roberta", "xlm-roberta", "distilbert", "electra", "camembert", "mpnet"}
)
LOGITS = "logits"  # the part of a cross-encoder: its classification head's output
# The largest difference from torch an export may show on its check batch; the vectors
# agree to about 1e-6, a wrongly traced graph (padding ignored) by 1e-2 or more.
CHECK_TOLERANCE = 1e-4


@dataclass(frozen=True)
class BackendPlan:
    """Which backend a metric runs, and why (for torch: why not ONNX Runtime)."""

    name: str  # "onnx" or "torch"
    why: str = ""
    # A hub model not downloaded yet: its type is unknown until the run downloads it, and
    # the run plans again then (before its config is hashed).
    pending: bool = False

    def describe(self) -> str:
        """As `explain`, the run's versions and the battery show it."""
        return f"{self.name} ({self.why})" if self.why else self.name


def onnxruntime_installed() -> bool:
    return importlib.util.find_spec("onnxruntime") is not None


def model_type(ref: ModelRef) -> str | None:
    """The `model_type` of the model's config.json, read without loading anything."""
    value = ref.local_config().get("model_type")
    return str(value) if value else None


def plan_backend(
    asked: str | None, ref: ModelRef, part: str, device: str, quantize: str | None
) -> BackendPlan:
    """The backend a metric will run on `device` (resolved), without exporting anything."""
    if asked == "torch":
        return BackendPlan("torch", "asked for")
    if asked not in (None, "onnx"):
        raise UserError(f"backend must be torch or onnx, not {asked!r}")
    if quantize:
        return BackendPlan("torch", f"quantize={quantize} runs in torch")
    if not onnxruntime_installed():
        return BackendPlan("torch", "onnxruntime is not installed")
    if device != "cpu":
        if asked is None:
            return BackendPlan("torch", f"the default on {device}")
        if device != "cuda" or "CUDAExecutionProvider" not in _providers():
            return BackendPlan("torch", f"this onnxruntime cannot run on {device}")
    kind = model_type(ref)
    if kind not in PLAIN_TYPES:
        return BackendPlan("torch", f"model type {kind or 'unknown'} is not exported to ONNX")
    if not export_ready(ref, part) and importlib.util.find_spec("onnx") is None:
        return BackendPlan("torch", "the onnx package, which exports the model, is not installed")
    failed = failure_note(ref, part)
    if failed is not None:
        return BackendPlan("torch", f"the ONNX export failed: {failed}")
    return BackendPlan("onnx", "ONNX Runtime, " + ("CUDA" if device == "cuda" else "CPU"))


def _providers() -> list[str]:
    import onnxruntime

    return list(onnxruntime.get_available_providers())


# --- the exported files --------------------------------------------------------------------


def export_path(ref: ModelRef, part: str) -> Path:
    return data_dir() / "onnx" / f"{ref.key}-{ref.fingerprint()}-{part}.onnx"


def _hash_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _failed_path(path: Path) -> Path:
    return path.with_name(path.name + ".failed")


def _exporter_versions() -> str:
    """The exporting libraries' versions: a failure under others is tried again."""
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for name in ("torch", "onnx", "onnxruntime"):
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} -")
    return ", ".join(found)


def failure_note(ref: ModelRef, part: str) -> str | None:
    """Why an earlier export of this model part failed (under the libraries installed
    now), or None."""
    try:
        text = _failed_path(export_path(ref, part)).read_text(encoding="utf-8")
    except OSError:
        return None
    why, _, versions = text.partition("\n")
    if versions.strip() != _exporter_versions():
        return None
    return why.strip() or "unknown error"


def export_ready(ref: ModelRef, part: str) -> bool:
    """Whether a whole export (the graph and its hash) is in place; not yet verified."""
    path = export_path(ref, part)
    return path.exists() and _hash_path(path).exists()


def verified_bytes(path: Path) -> bytes | None:
    """The export's bytes when its sha256 is the one stored beside it, else None."""
    try:
        data = path.read_bytes()
        stored = _hash_path(path).read_text(encoding="ascii").strip()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == stored else None


def export(loaded: LoadedModel, part: str) -> Path:
    """Export `part` of the loaded model and put it in place whole; raises on failure
    (after leaving a `.failed` note that later plans read)."""
    path = export_path(loaded.ref, part)
    path.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.stem}."))
    try:
        graph = work / "model.onnx"
        _trace(loaded, part, graph)
        extra = [p.name for p in work.iterdir() if p != graph]
        if extra:  # weights over 2 GB go to side files, which one file cannot carry
            raise UserError("the model is too large for one ONNX file")
        _check_against_torch(loaded, part, graph.read_bytes())
        digest = hashlib.sha256(graph.read_bytes()).hexdigest()
        _hash_path(path).unlink(missing_ok=True)  # no hash while the graph is replaced
        os.replace(graph, path)
        write_text_atomically(_hash_path(path), digest + "\n")
        _failed_path(path).unlink(missing_ok=True)  # a failure under older libraries
    except Exception as exc:
        with contextlib.suppress(OSError):  # a read-only data folder: tried again next run
            write_text_atomically(
                _failed_path(path), f"{_first_line(exc)}\n{_exporter_versions()}\n"
            )
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return path


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def _wrapper(loaded: LoadedModel, part: str) -> tuple[Any, list[str]]:
    """A torch module computing `part` from plain tensors, and its input names."""
    import torch

    if part == LOGITS:
        model = loaded.model
        names = ["ids", "mask", "types"]

        class Logits(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, ids: Any, mask: Any, types: Any) -> Any:
                return self.model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits

        return Logits().eval(), names
    view = layer_view(loaded, int(part.removeprefix("L")))
    if view is None:
        raise UserError("the model has no plain list of layers to cut")

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.view = view

        def forward(self, ids: Any, mask: Any) -> Any:
            return self.view(ids, attention_mask=mask)[0]

    return Hidden().eval(), ["ids", "mask"]


def _example(loaded: LoadedModel, names: list[str], rows: int, length: int) -> tuple[Any, ...]:
    """Inputs for tracing or checking: the last row padded, so the graph keeps its mask
    (a traced `if mask.all()` would otherwise drop it), and a second segment where the
    model has segment types."""
    import torch

    generator = torch.Generator().manual_seed(length)
    ids = torch.randint(1000, 2000, (rows, length), generator=generator)
    mask = torch.ones((rows, length), dtype=torch.long)
    mask[-1, length // 2 :] = 0
    types = torch.zeros((rows, length), dtype=torch.long)
    if int(getattr(loaded.model.config, "type_vocab_size", 1) or 1) > 1:
        types[:, length // 3 :] = 1
    return (ids, mask, types)[: len(names)]


def _trace(loaded: LoadedModel, part: str, graph: Path) -> None:
    import torch

    module, names = _wrapper(loaded, part)
    axes = {0: "batch", 1: "tokens"}
    outputs = {"out": {0: "batch"} if part == LOGITS else axes}
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        # The tracer warns of the legacy exporter and of Python conditions it fixes; the
        # check against torch below is what says whether the graph is right.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            _example(loaded, names, 2, 8),
            str(graph),
            input_names=names,
            output_names=["out"],
            dynamic_axes={**{n: axes for n in names}, **outputs},
            dynamo=False,
            opset_version=17,
        )


def _check_against_torch(loaded: LoadedModel, part: str, data: bytes) -> None:
    """Run the export and torch on a padded batch of another shape than the traced one."""
    import numpy as np
    import torch

    module, names = _wrapper(loaded, part)
    inputs = _example(loaded, names, 3, 13)
    with torch.inference_mode():
        expected = module(*inputs).float().numpy()
    runner = OnnxRunner(_session(data, "cpu"))
    got = runner(*inputs).numpy()
    keep = inputs[1].numpy().astype(bool) if part != LOGITS else np.ones(len(got), dtype=bool)
    diff = float(np.max(np.abs(got[keep] - expected[keep])))
    if not diff <= CHECK_TOLERANCE:
        raise UserError(f"the export differs from torch by {diff:.2g}")


def _session(data: bytes, device: str) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # its warnings of unused initialisers are not the user's
    if os.environ.get("OMP_WAIT_POLICY", "PASSIVE").upper() != "ACTIVE":
        # Waiting threads sleep instead of spinning, as torch's do here (see
        # models.prefer_passive_thread_waits): on a shared machine spinning takes the cores
        # the working threads need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    providers = ["CPUExecutionProvider"]
    if device == "cuda":
        providers.insert(0, "CUDAExecutionProvider")
    return onnxruntime.InferenceSession(data, options, providers=providers)


# --- running it ----------------------------------------------------------------------------


class OnnxRunner:
    """One exported part, run on padded torch tensors; returns a float32 torch tensor."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.names = [i.name for i in session.get_inputs()]

    def __call__(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
        import torch

        types = token_type_ids if token_type_ids is not None else input_ids * 0
        given = {"ids": input_ids, "mask": attention_mask, "types": types}
        return torch.from_numpy(self.arrays({k: v.cpu().numpy() for k, v in given.items()}))

    def arrays(self, given: dict[str, Any]) -> Any:
        """The output for numpy int64 inputs named `ids`, `mask` (and `types`), as numpy."""
        # The exporter drops an input the graph never reads (the mask of layer 0, the
        # embeddings alone): the graph is fed what it has.
        if "types" not in given and "types" in self.names:
            given = {**given, "types": given["ids"] * 0}
        return self.session.run(None, {name: given[name] for name in self.names})[0]


_RUNNERS: dict[tuple[str, str], OnnxRunner] = {}
_LOCK = threading.Lock()
_SAID: set[str] = set()


def say_once(line: str) -> None:
    """The one line a fallback to torch prints (once per process)."""
    if line not in _SAID:
        _SAID.add(line)
        print(line, file=sys.stderr, flush=True)


def ensure_export(loaded: LoadedModel, part: str) -> bool:
    """Export `part` unless a whole export is in place; False (said in one line) when it fails."""
    if export_ready(loaded.ref, part):
        return True
    try:
        export(loaded, part)
    except Exception as exc:
        say_once(
            f"{loaded.ref.name}: the ONNX export failed ({_first_line(exc)}); running in torch"
        )
        return False
    return True


def onnx_runner(loaded: LoadedModel, part: str, device: str = "cpu") -> OnnxRunner | None:
    """The session of `part`, exported (or rebuilt, when its hash does not match) as needed;
    None, said in one line, when the export fails."""
    path = export_path(loaded.ref, part)
    key = (str(path), device)
    with _LOCK:
        hit = _RUNNERS.get(key)
        if hit is not None:
            return hit
        ready = export_ready(loaded.ref, part)
        data = verified_bytes(path) if ready else None
        if data is None:
            # A graph without its hash (an export cut short, or another process's under
            # way) is exported again quietly; the new one replaces it whole.
            if ready:
                say_once(f"{path.name}: its hash does not match; exporting it again")
                _hash_path(path).unlink(missing_ok=True)
            if not ensure_export(with_torch(loaded), part):
                return None
            data = verified_bytes(path)
            if data is None:
                say_once(f"{path.name}: unreadable after the export; running in torch")
                return None
        runner = OnnxRunner(_session(data, device))
        _RUNNERS[key] = runner
        return runner


def with_torch(loaded: LoadedModel) -> LoadedModel:
    """The record with the torch model the export is traced from (loaded now for a
    record without one)."""
    if not loaded.torchless:
        return loaded
    return load_model(loaded.ref.name, loaded.kind, loaded.device, loaded.precision)


_LIGHT: dict[tuple[str, str], LoadedModel] = {}


def light_model(ref: ModelRef, part: str) -> LoadedModel | None:
    """A record for running `part` in ONNX Runtime on the CPU without torch, or None.

    When the export is in place and the model is a BERT encoder with a `tokenizer.json`
    (see native_bert), nothing of torch is needed to score: the tokenizer is the
    `tokenizers` library's (as transformers' fast tokenizer), the config is read as JSON
    and the vectors stay numpy arrays. Importing torch and loading its weights is most of
    what a short run on the CPU spends besides its forward passes.
    """
    folder = ref.folder()
    if folder is None or os.environ.get(NATIVE_ENV, "1").lower() in ("0", "false", "no"):
        return None
    if not export_ready(ref, part):
        return None
    key = (ref.fingerprint(), ref.location)
    with _LOCK:
        hit = _LIGHT.get(key)
        if hit is not None:
            return hit
        from meaningbench.metrics.neural.support.native_bert import (
            BertConfigView,
            NativeTokenizer,
            native_config,
        )

        config = native_config(folder)
        if config is None:
            return None
        light = LoadedModel(
            ref,
            "cross-encoder" if part == LOGITS else "encoder",
            "cpu",
            "fp32",
            ConfigOnly(BertConfigView(config)),
            NativeTokenizer(folder),
            backend="onnx",
        )
        _LIGHT[key] = light
        return light


def onnx_part(loaded: LoadedModel, part: str) -> OnnxRunner | None:
    """The runner of `part` when the loaded model runs through ONNX Runtime, else None
    (torch runs it: the backend is torch, or its export failed)."""
    if loaded.backend != "onnx":
        return None
    return onnx_runner(loaded, part, loaded.device)


def clear_runners() -> None:
    with _LOCK:
        _RUNNERS.clear()
        _SAID.clear()
        _LIGHT.clear()
