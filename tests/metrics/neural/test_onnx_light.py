"""ONNX Runtime on the CPU with the export in place: scoring without torch.

The record of `onnx_encoder.light_model` tokenises with `tokenizers`, runs the exported
graph on numpy arrays and matches / pools in numpy. These tests hold it to the torch-loaded
ONNX path (the same graph, fed torch tensors) and to transformers' tokenizer, and check in
fresh processes that neither torch nor transformers' model code is imported.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.meaningbert import MeaningBertMetric
from meaningbench.metrics.neural.sbert import SentenceCosineMetric
from meaningbench.metrics.neural.support.cache import MEMORY
from meaningbench.metrics.neural.support.encoding import _plans, token_ids, window_length
from meaningbench.metrics.neural.support.models import (
    NATIVE_ENV,
    clear_model_cache,
    load_model,
    resolve_device,
    resolve_model,
)
from meaningbench.metrics.neural.support.onnx_encoder import LOGITS, clear_runners, light_model
from tests.metrics.neural.conftest import SENTENCES

LONG = " ".join(
    f"Sentence {i} says the committee met on day {i} in the old hall." for i in range(90)
)
PAIRS = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(SENTENCES)] + [
    Pair(99, LONG, SENTENCES[0][1], (LONG,)),
]
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    clear_runners()
    MEMORY.clear()


def _raw(metric: BertScoreMetric | SentenceCosineMetric) -> list[float | None]:
    return [s.raw for s in metric.score_batch(PAIRS)]


def _torch_loaded_onnx(metric: BertScoreMetric | SentenceCosineMetric) -> list[float | None]:
    """The scores of the same graph fed torch tensors (the record with a torch model)."""
    metric.scoring_model = metric.loaded  # type: ignore[method-assign]
    return _raw(metric)


@pytest.mark.parametrize("long_texts", ["windows", "truncate"])
def test_bertscore_without_torch_equals_the_torch_loaded_onnx_path(long_texts: str) -> None:
    metric = BertScoreMetric(device="cpu", embedding_cache_mb=0, long_texts=long_texts, idf=True)
    light = _raw(metric)
    assert metric.scoring_model().torchless and metric.scoring_model().backend == "onnx"
    MEMORY.clear()
    other = BertScoreMetric(device="cpu", embedding_cache_mb=0, long_texts=long_texts, idf=True)
    assert light == pytest.approx(_torch_loaded_onnx(other), abs=1e-6)


@pytest.mark.parametrize("layer", [None, 3, 0])
def test_sbert_without_torch_equals_the_torch_loaded_onnx_path(layer: int | None) -> None:
    metric = SentenceCosineMetric(device="cpu", embedding_cache_mb=0, layer=layer)
    light = _raw(metric)
    assert metric.scoring_model().torchless
    MEMORY.clear()
    other = SentenceCosineMetric(device="cpu", embedding_cache_mb=0, layer=layer)
    assert light == pytest.approx(_torch_loaded_onnx(other), abs=1e-6)


def test_meaningbert_without_torch_equals_the_torch_loaded_onnx_path(
    tiny_regression_model: str,
) -> None:
    """Pairs tokenized by `tokenizers` (a long source truncated longest first, an empty
    output) and the head's graph fed numpy arrays: the scores of the same graph fed
    transformers' torch tensors."""
    metric = MeaningBertMetric(model=tiny_regression_model, device="cpu")
    light = [s.raw for s in metric.score_batch(PAIRS)]
    loaded = metric.scoring_model()
    assert loaded.torchless and loaded.kind == "cross-encoder"
    assert loaded.model.config.num_labels == 1
    other = MeaningBertMetric(model=tiny_regression_model, device="cpu")
    other.scoring_model = other.loaded  # type: ignore[method-assign]
    assert light == pytest.approx([s.raw for s in other.score_batch(PAIRS)], abs=1e-6)


def test_pair_ids_equal_those_of_transformers_tokenizer(
    tiny_regression_model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    MeaningBertMetric(model=tiny_regression_model, device="cpu").ready_backend()
    light = light_model(resolve_model(tiny_regression_model), LOGITS)
    assert light is not None
    monkeypatch.setenv(NATIVE_ENV, "0")
    clear_model_cache()
    try:
        hf = load_model(tiny_regression_model, "cross-encoder", device="cpu")
        assert type(hf.tokenizer).__module__.startswith("transformers")
        firsts = [p.source for p in PAIRS] + ["", "x"]
        seconds = [p.output for p in PAIRS] + ["y", ""]
        for max_length in (512, 24):
            args = {"padding": True, "truncation": "longest_first", "max_length": max_length}
            ours, theirs = (
                light.tokenizer(firsts, seconds, **args),
                hf.tokenizer(firsts, seconds, **args),
            )
            for key in ("input_ids", "token_type_ids", "attention_mask"):
                assert ours[key] == theirs[key], (key, max_length)
    finally:
        clear_model_cache()


def test_the_torch_backend_and_int8_keep_the_torch_model() -> None:
    assert not BertScoreMetric(device="cpu", backend="torch").scoring_model().torchless
    assert not BertScoreMetric(device="cpu", quantize="int8").scoring_model().torchless


def test_numpy_vectors_on_disk_are_read_by_the_torch_loaded_onnx_path() -> None:
    """Both ONNX paths share one cache (numerics `fp32-onnx`), torch's its own."""
    light = BertScoreMetric(device="cpu")
    first = _raw(light)
    MEMORY.clear()
    again = BertScoreMetric(device="cpu")
    assert _torch_loaded_onnx(again) == pytest.approx(first, abs=1e-6)
    torch_run = BertScoreMetric(device="cpu", backend="torch")
    assert torch_run.loaded().numerics == "fp32"
    assert light.scoring_model().numerics == again.loaded().numerics == "fp32-onnx"


def test_token_ids_and_windows_equal_those_of_transformers_tokenizer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ref = resolve_model(None)
    BertScoreMetric(device="cpu", layer=2).ready_backend()  # the export the record needs
    light = light_model(ref, "L2")
    assert light is not None
    monkeypatch.setenv(NATIVE_ENV, "0")
    clear_model_cache()
    try:
        hf = load_model(None, device="cpu")
        assert type(hf.tokenizer).__module__.startswith("transformers")
        texts = [t for p in PAIRS for t in (p.source, p.output)] + ["", "  ", "x"]
        for truncate in (True, False):
            assert token_ids(light, texts, truncate=truncate) == token_ids(
                hf, texts, truncate=truncate
            )
        assert window_length(light) == window_length(hf)
        assert _plans(light, texts, "windows") == _plans(hf, texts, "windows")
    finally:
        clear_model_cache()


def test_the_cpu_is_told_without_torch_where_no_gpu_can_be() -> None:
    code = (
        "import sys\n"
        "from meaningbench.metrics.neural.support.models import gpu_possible, resolve_device\n"
        "print(resolve_device('cpu'), gpu_possible(), 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    device, possible, imported = out.stdout.split()
    assert device == "cpu" and imported == "False"
    # With a GPU possible, `auto` still asks torch (and finds what this machine has).
    import torch

    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert possible in ("True", "False")
    if possible == "True":
        assert resolve_device("auto") in (expected, "mps")
    else:
        assert resolve_device("auto") == expected


SCORE_TINY_STUDY = """
import json, sys
from meaningbench.cli import main
code = main([{command}])
heavy = [n for n in ("torch", "transformers", "transformers.modeling_utils") if n in sys.modules]
print(json.dumps({{"code": code, "heavy": heavy}}))
"""


@pytest.mark.parametrize("metric", ["bertscore", "sbert_cosine", "meaningbert"])
def test_a_cached_export_scores_a_study_without_torch_or_transformers(
    metric: str, new_study, tmp_path: Path, tiny_regression_model: str
) -> None:
    from meaningbench.db.study import copy_study
    from tests.jobs.studydata import add_items

    if Path("/dev/nvidiactl").exists():
        pytest.skip("a GPU machine: `auto` asks torch for its device")
    add_items(new_study, [(s, o, (), "sys-a") for s, o in SENTENCES[:4]])
    unscored = copy_study(new_study.path, tmp_path / "second.mbstudy")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}

    def run(study: Path, spec: str) -> dict[str, object]:
        args = ", ".join(repr(a) for a in ["score", str(study), "--metrics", spec, "--json"])
        out = subprocess.run(
            [sys.executable, "-c", SCORE_TINY_STUDY.format(command=args)],
            capture_output=True, text=True, env=env, timeout=300, check=True,
        )  # fmt: skip
        return dict(json.loads(out.stdout.strip().splitlines()[-1]))

    spec = f"{metric}[model={tiny_regression_model}]" if metric == "meaningbert" else metric
    first = run(new_study.path, spec)  # exports the model (torch is needed for that)
    assert first["code"] == 0 and "torch" in first["heavy"]  # type: ignore[operator]
    # No embedding on disk to stand in for the forward passes (MeaningBERT keeps none).
    second = run(unscored, spec if metric == "meaningbert" else f"{spec}[embedding_cache_mb=0]")
    assert second == {"code": 0, "heavy": []}
    scored = sqlite3.connect(unscored).execute("SELECT COUNT(*) FROM score").fetchone()[0]
    assert scored == 4
