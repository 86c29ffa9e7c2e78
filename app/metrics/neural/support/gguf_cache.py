"""The judge's GGUF models, dequantised once: transformers turns a .gguf file into float32
weights on every load (about a minute for SmolLM2-135M on a busy CPU), so the result is saved
in the data folder (`models_dir()/judge-gguf/<sha256 of the file>/`, transformers' own
format) and later runs load that in seconds.

The key is the GGUF file's content hash, so a replaced file never reuses old weights; the hash
itself is remembered by (path, size, mtime) in `hashes.json` beside the caches, so a run does
not read the whole file again. A cache is written in a temporary folder and renamed into place
whole; one that fails to load (a truncated or deleted file) is removed and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meaningbench.settings import models_dir

HASHES = "hashes.json"
# Written last into a cache folder: a folder without it is not a finished cache.
MANIFEST = "meaningbench-gguf.json"
CHUNK = 1 << 20

# (model, tokenizer)
Loaded = tuple[Any, Any]


def cache_root() -> Path:
    path = models_dir() / "judge-gguf"
    path.mkdir(parents=True, exist_ok=True)
    return path


def file_sha256(path: Path) -> str:
    """The file's sha256, read again only when its size or modification time changed."""
    path = path.resolve()
    stat = path.stat()
    stamp = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    memo_path = cache_root() / HASHES
    memo = _read_json(memo_path)
    known = memo.get(str(path))
    if isinstance(known, dict) and all(known.get(k) == v for k, v in stamp.items()):
        digest = known.get("sha256")
        if isinstance(digest, str) and len(digest) == 64:
            return digest
    sha = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(CHUNK):
            sha.update(block)
    digest = sha.hexdigest()
    memo[str(path)] = {**stamp, "sha256": digest}
    with contextlib.suppress(OSError):  # a read-only data folder: hashed again next run
        _write_json_whole(memo_path, memo)
    return digest


def cached_model(
    gguf: Path,
    build: Callable[[], Loaded],
    load: Callable[[Path], Loaded],
) -> tuple[Loaded, bool]:
    """The model and tokenizer of `gguf`: from its cache when one loads, else `build()`
    (the slow dequantisation), which is then saved. The flag says whether the cache served."""
    folder = cache_root() / file_sha256(gguf)
    if (folder / MANIFEST).is_file():
        try:
            return load(folder), True
        except Exception:
            # Whatever a damaged cache raises (OSError, a safetensors or JSON error): the GGUF
            # file is still there, so the cache is rebuilt rather than the run failed.
            shutil.rmtree(folder, ignore_errors=True)
    loaded = build()
    # A full disk or a model transformers cannot describe again: this run goes on with the
    # weights it has, and the next one dequantises again.
    with contextlib.suppress(Exception):
        _save_whole(folder, loaded, gguf)
    return loaded, False


def _save_weights(model: Any, folder: Path) -> None:
    """The float32 weights and the config, as `from_pretrained` reads them. Not
    `save_pretrained`: transformers refuses to save a model it loaded from GGUF (it counts
    as quantised), although its weights are plain float32 by then."""
    from safetensors.torch import save_model

    config = model.config.to_dict()
    config.pop("quantization_config", None)
    (folder / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    # save_model, not save_file: it writes tied weights (SmolLM2's embeddings) once.
    save_model(model, str(folder / "model.safetensors"), metadata={"format": "pt"})


def _save_whole(folder: Path, loaded: Loaded, gguf: Path) -> None:
    model, tokenizer = loaded
    part = Path(tempfile.mkdtemp(prefix=".part-", dir=folder.parent))
    try:
        _save_weights(model, part)
        tokenizer.save_pretrained(part)
        _write_json_whole(part / MANIFEST, {"gguf": str(gguf.resolve()), "sha256": folder.name})
        if folder.exists():  # an unfinished or damaged cache
            shutil.rmtree(folder, ignore_errors=True)
        os.replace(part, folder)
    finally:
        # Another process may have renamed its own copy first: ours is then dropped.
        shutil.rmtree(part, ignore_errors=True)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write_json_whole(path: Path, value: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(value, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
