"""`backend=onnx`: the export in the data folder, its hash, the fallback to torch, the config
hash and what a run records. The reference tests of BERTScore, SBERT cosine and MeaningBERT
run on both backends in their own files."""

from __future__ import annotations

import json

import pytest

from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.metrics.base import Pair
from meaningbench.metrics.explain import ExplainItem
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.meaningbert import MeaningBertMetric
from meaningbench.metrics.neural.sbert import SentenceCosineMetric
from meaningbench.metrics.neural.support.cache import MEMORY
from meaningbench.metrics.neural.support.models import resolve_model
from meaningbench.metrics.neural.support.onnx_encoder import (
    clear_runners,
    export_path,
    verified_bytes,
)
from meaningbench.runtime import JobContext
from tests.jobs.studydata import add_items
from tests.metrics.neural.conftest import SENTENCES

PAIRS = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(SENTENCES)]
LAYER = 3


@pytest.fixture(autouse=True)
def _fresh_sessions():
    # Each test's data folder is its own: no session of another's export, and no vectors
    # remembered from another test standing in for a forward pass.
    clear_runners()
    MEMORY.clear()
    yield
    clear_runners()
    MEMORY.clear()


def _raw(metric) -> list[float | None]:
    return [s.raw for s in metric.score_batch(PAIRS)]


def _bertscore(**config) -> BertScoreMetric:
    return BertScoreMetric(layer=LAYER, embedding_cache_mb=0, **config)


def test_onnx_is_the_default_on_the_cpu_and_agrees_with_torch():
    metric = _bertscore(device="cpu")
    assert metric.backend().name == "onnx"
    assert metric.backend().describe() == "onnx (ONNX Runtime, CPU)"
    onnx = _raw(metric)
    torch = _raw(_bertscore(device="cpu", backend="torch"))
    assert onnx == pytest.approx(torch, abs=1e-6)
    # Exported once, whole, with its hash beside it.
    path = export_path(resolve_model(None), f"L{LAYER}")
    assert verified_bytes(path) is not None
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name, path.name + ".sha256"]


def test_the_backend_is_in_the_config_hash_only_when_it_is_onnx():
    onnx, torch, default = _bertscore(), _bertscore(backend="torch"), _bertscore(device="cpu")
    assert onnx.score_config()["backend"] == "onnx" and "backend" not in torch.score_config()
    assert onnx.config_hash() != torch.config_hash()
    assert default.config_hash() == onnx.config_hash()  # the default on the CPU is ONNX
    assert torch.versions()["backend"] == "torch (asked for)"
    assert onnx.versions()["backend"] == "onnx (ONNX Runtime, CPU)"
    assert onnx.versions()["onnxruntime"][0].isdigit()


def test_int8_and_half_precision_stay_in_torch():
    assert _bertscore(quantize="int8").backend().describe() == "torch (quantize=int8 runs in torch)"
    assert _bertscore(quantize="int8").versions()["backend"].startswith("torch")


def test_a_corrupt_export_is_detected_by_its_hash_and_rebuilt(capfd):
    first = _raw(_bertscore(backend="onnx"))
    path = export_path(resolve_model(None), f"L{LAYER}")
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)  # a run of weights zeroed
    path.write_bytes(bytes(data))
    assert verified_bytes(path) is None
    clear_runners()  # as a new process: the session is built from the file again
    MEMORY.clear()
    capfd.readouterr()
    again = _raw(_bertscore(backend="onnx"))
    err = capfd.readouterr().err
    assert f"{path.name}: its hash does not match; exporting it again" in err
    assert verified_bytes(path) is not None
    assert again == pytest.approx(first, abs=1e-7)
    # A graph without its hash (an export cut short before the hash was written) is
    # exported again without a word: nothing was wrong with a whole export.
    path.with_name(path.name + ".sha256").unlink()
    clear_runners()
    MEMORY.clear()
    assert _raw(_bertscore(backend="onnx")) == pytest.approx(first, abs=1e-7)
    assert "hash" not in capfd.readouterr().err and verified_bytes(path) is not None


def test_a_failed_export_falls_back_to_torch_with_one_line(capfd):
    """The export cannot be put in place (a folder holds its name): the metric says so in
    one line, scores in torch, and the next plan reads why from the note left beside it."""
    path = export_path(resolve_model(None), f"L{LAYER}")
    path.mkdir(parents=True)
    torch = _raw(_bertscore(backend="torch"))
    metric = _bertscore(backend="onnx")
    capfd.readouterr()
    assert metric.ready_backend().name == "torch"
    assert "backend" not in metric.score_config()  # hashed as the torch run it is
    assert _raw(metric) == torch
    lines = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "the ONNX export failed" in lines[0] and lines[0].endswith("running in torch")
    assert not any(p.name.endswith(".onnx") and p.is_file() for p in path.parent.iterdir())
    later = _bertscore(backend="onnx").backend()
    assert later.name == "torch" and later.why.startswith("the ONNX export failed: ")


def test_sbert_layers_and_meaningbert_run_through_onnx(tiny_regression_model):
    # Layer 0 is the embeddings alone: its graph never reads the mask, and the exporter
    # drops that input.
    for layer in (None, 2, 0):
        onnx = SentenceCosineMetric(layer=layer, embedding_cache_mb=0)
        assert onnx.backend().name == "onnx"
        torch = SentenceCosineMetric(layer=layer, embedding_cache_mb=0, backend="torch")
        assert _raw(onnx) == pytest.approx(_raw(torch), abs=1e-6)
    cross = MeaningBertMetric(model=tiny_regression_model)
    assert cross.onnx_part() == "logits" and cross.backend().name == "onnx"
    reference = MeaningBertMetric(model=tiny_regression_model, backend="torch")
    assert _raw(cross) == pytest.approx(_raw(reference), abs=1e-5)


def test_explain_says_which_backend_scored(new_study):
    (item,) = BertScoreMetric(backend="onnx").score_batch(PAIRS[:1])
    explained = BertScoreMetric(backend="onnx").explain(
        ExplainItem(PAIRS[0], item.value, item.details)
    )
    assert "ONNX Runtime" in (explained.note or "")
    (torch_item,) = BertScoreMetric(backend="torch").score_batch(PAIRS[:1])
    explained = BertScoreMetric().explain(
        ExplainItem(PAIRS[0], torch_item.value, torch_item.details)
    )
    assert "torch" in (explained.note or "")


def test_the_run_records_the_backend(new_study):
    add_items(new_study, [(s, o, (), "sys-a") for s, o in SENTENCES[:4]])
    request = ScoreRequest(new_study.path, ["sbert_cosine"], {"device": "cpu"})
    (done,) = score_study(request, JobContext())
    assert done.status == "done" and done.scored == 4
    with new_study.session() as s:
        (versions,) = s.connection().exec_driver_sql(
            "SELECT versions FROM metric_run WHERE metric = 'sbert_cosine'"
        )
    assert json.loads(versions[0])["backend"] == "onnx (ONNX Runtime, CPU)"
    (again,) = score_study(request, JobContext())
    assert again.scored == 0  # cached under the ONNX run's hash


HUB_CHILD = """
import json, sys
if sys.argv[1:] == ["config-first"]:  # a cache that holds the config alone
    from huggingface_hub import hf_hub_download
    hf_hub_download("meaningbench-test/tiny-bert", "config.json")
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.bertscore import BertScoreMetric
metric = BertScoreMetric(model="meaningbench-test/tiny-bert", layer=2, embedding_cache_mb=0,
                         device="cpu")
planned = metric.backend()
metric.prepare([])
scores = metric.score_batch([Pair(0, "A cat sat on the mat.", "The cat sat.", ())])
print(json.dumps({"planned": [planned.name, planned.pending, planned.describe()],
                  "ran": metric.backend().name, "hash": metric.config_hash(),
                  "scores": [s.raw for s in scores], "torch": "torch" in sys.modules}))
"""


def test_a_hub_model_downloaded_by_its_first_run_runs_onnx_under_the_later_runs_hash(
    tiny_encoder, tmp_path
):
    """A hub model not yet downloaded cannot say its type, so the plan waits: the run that
    downloads it plans again, exports and scores on ONNX Runtime under the config hash of
    every later run (not a torch hash that the next run would score again under another)."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from tests.metrics.neural.local_hub import local_hub

    def run(url: str, offline: str, *args: str) -> dict:
        env = dict(os.environ, HF_ENDPOINT=url, HF_HOME=str(tmp_path / "hf"),
                   HF_HUB_OFFLINE=offline, TRANSFORMERS_OFFLINE=offline,
                   MEANINGBENCH_HOME=str(tmp_path / "home"))  # fmt: skip
        done = subprocess.run([sys.executable, "-c", HUB_CHILD, *args], env=env,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    with local_hub("meaningbench-test/tiny-bert", Path(tiny_encoder)) as (url, seen):
        first = run(url, "0")
        weights = [r for r in seen if r.startswith("GET") and "model.safetensors" in r]
        assert len(weights) == 1  # downloaded by the first run
        second = run(url, "1")  # from the cache, offline
    assert first["planned"][:2] == ["torch", True]
    assert "until the model is downloaded" in first["planned"][2]
    assert first["ran"] == "onnx" and second["planned"][:2] == ["onnx", False]
    assert first["hash"] == second["hash"]
    assert first["scores"] == pytest.approx(second["scores"], abs=1e-6)
    # From the cached snapshot, with its export in place: the run imports no torch.
    assert first["torch"] and not second["torch"]
    # A cache cut short (the config alone): the run asks the hub for the rest.
    with local_hub("meaningbench-test/tiny-bert", Path(tiny_encoder)) as (url, seen):
        shutil.rmtree(tmp_path / "hf")
        third = run(url, "0", "config-first")
    assert third["planned"][:2] == ["onnx", False] and third["hash"] == first["hash"]
    assert any("model.safetensors" in r for r in seen)
    assert third["scores"] == pytest.approx(first["scores"], abs=1e-6)
