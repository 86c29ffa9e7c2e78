"""The dequantised GGUF cache: built once per file content, loaded whole afterwards, rebuilt
when damaged, and the file's hash remembered by (path, size, mtime). The slow build is a tiny
causal LM built from a config (what transformers returns for a GGUF file is a model of the
same kind); the embedded SmolLM2 goes through the same cache in test_judge_smollm2.py."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from meaningbench.metrics.neural.support import gguf_cache
from meaningbench.metrics.neural.support.gguf_cache import cached_model, file_sha256
from tests.metrics.neural.judge_models import tiny_judge


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    return tiny_judge(tmp_path_factory.mktemp("tiny"), writes="0123456789")


def _from_folder(folder: Path | str) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return (
        AutoModelForCausalLM.from_pretrained(folder).eval(),
        AutoTokenizer.from_pretrained(folder),
    )


class Builds:
    """The slow path, counted."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.count = 0

    def __call__(self) -> tuple[Any, Any]:
        self.count += 1
        return _from_folder(self.source)


def _logits(model: Any) -> Any:
    import torch

    with torch.inference_mode():
        return model(torch.tensor([[5, 6, 7, 8]])).logits


def test_the_second_load_comes_from_the_cache_with_the_same_weights(tmp_path, tiny):
    import torch

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF pretend weights")
    builds = Builds(tiny)
    (first, tok1), cached1 = cached_model(gguf, builds, _from_folder)
    (second, tok2), cached2 = cached_model(gguf, builds, _from_folder)
    assert (cached1, cached2, builds.count) == (False, True, 1)
    assert torch.equal(_logits(first), _logits(second))
    assert tok2.encode("57") == tok1.encode("57")
    assert tok2.chat_template == tok1.chat_template
    folder = gguf_cache.cache_root() / hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert (folder / gguf_cache.MANIFEST).is_file()
    # Nothing half-written is left beside the finished cache.
    assert not [p for p in gguf_cache.cache_root().iterdir() if p.name.startswith(".part-")]


def test_a_damaged_cache_is_rebuilt(tmp_path, tiny):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF other weights")
    builds = Builds(tiny)
    cached_model(gguf, builds, _from_folder)
    folder = gguf_cache.cache_root() / file_sha256(gguf)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # a truncated file
    _, cached = cached_model(gguf, builds, _from_folder)
    assert (cached, builds.count) == (False, 2)
    _, cached = cached_model(gguf, builds, _from_folder)
    assert (cached, builds.count) == (True, 2)


def test_an_unfinished_cache_folder_is_not_used(tmp_path, tiny):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF third weights")
    folder = gguf_cache.cache_root() / file_sha256(gguf)
    folder.mkdir()
    (folder / "config.json").write_text("{}")  # no manifest: a build that died midway
    builds = Builds(tiny)
    _, cached = cached_model(gguf, builds, _from_folder)
    assert (cached, builds.count) == (False, 1)
    assert (folder / gguf_cache.MANIFEST).is_file()


def test_a_changed_file_gets_a_new_cache(tmp_path, tiny):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF version one")
    builds = Builds(tiny)
    cached_model(gguf, builds, _from_folder)
    gguf.write_bytes(b"GGUF version two, longer")
    _, cached = cached_model(gguf, builds, _from_folder)
    assert (cached, builds.count) == (False, 2)


def test_the_hash_is_remembered_by_path_size_and_mtime(tmp_path):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"abc")
    real = hashlib.sha256(b"abc").hexdigest()
    assert file_sha256(gguf) == real
    stat = gguf.stat()
    # Same size and mtime, other content: the remembered hash is trusted, the file not read.
    gguf.write_bytes(b"xyz")
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file_sha256(gguf) == real
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert file_sha256(gguf) == hashlib.sha256(b"xyz").hexdigest()
