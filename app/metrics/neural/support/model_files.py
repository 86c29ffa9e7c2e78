"""One file of a model's repository beside its weights (a sentence-transformers module's
config, say), wherever the model lives: its folder, or the Hugging Face cache, downloaded
there when the machine is online. Loading a hub model fetches only what transformers needs,
so these files come one by one, pinned to the snapshot the weights came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from meaningbench.errors import UserError
from meaningbench.metrics.neural.support.models import ModelRef, offline


def model_file(ref: ModelRef, relative: str) -> Path | None:
    """The file `relative` of the model, or None where the model has none (or, offline, where
    the cache does not hold it)."""
    if ref.is_local:
        path = Path(ref.location) / relative
        return path if path.is_file() else None
    try:
        from huggingface_hub import hf_hub_download, try_to_load_from_cache
        from huggingface_hub.errors import EntryNotFoundError
    except ImportError:
        return None
    revision = ref.revision or "main"
    hit = try_to_load_from_cache(ref.location, relative, revision=revision)
    if isinstance(hit, str):
        return Path(hit)
    if hit is not None or offline():  # known to be missing, or not to be asked for
        return None
    try:
        return Path(hf_hub_download(ref.location, relative, revision=revision))
    except EntryNotFoundError:
        return None
    except Exception as exc:  # the network, the hub: never a silently different default
        raise UserError(
            f"model {ref.name!r}: {relative} could not be read from the Hugging Face Hub "
            f"({type(exc).__name__}: {exc}); try again online, or give a local directory"
        ) from exc


def model_json(ref: ModelRef, relative: str) -> Any:
    """The JSON file `relative` of the model, or None where it has none or it is not JSON."""
    path = model_file(ref, relative)
    if path is None:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
