"""`quantize=int8`: dynamic int8 linear layers for the encoder metrics, kept apart from float.

Tolerances are what int8 moved on these sentences, with room: on the embedded MiniLM the
largest change of an SBERT cosine was 0.055 and of a BERTScore F1 0.044 (per-channel weights,
x86 engine; on CSMD test, up to 0.08 and 0.07), while the order of the pairs stayed the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.errors import UserError
from meaningbench.jobs.metric_specs import configured_names
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.metrics.base import Pair
from meaningbench.metrics.names import metric_canonical_name
from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.meaningbert import MeaningBertMetric
from meaningbench.metrics.neural.sbert import SentenceCosineMetric
from meaningbench.metrics.neural.support.models import NATIVE_ENV, clear_model_cache
from meaningbench.metrics.neural.support.quantize import count_int8_linears
from meaningbench.runtime import JobContext
from tests.jobs.studydata import add_items
from tests.metrics.neural.conftest import SENTENCES, _save_with_tokenizer

PAIRS = [Pair(i, s, o, (s,)) for i, (s, o) in enumerate(SENTENCES) if o]
MINILM_LINEARS = 6 * 6  # per layer: query, key, value, attention output, intermediate, output


def _raws(metric, pairs=PAIRS) -> list[float]:
    return [float(s.raw) for s in metric.score_batch(pairs)]


def _order(values: list[float]) -> list[int]:
    return sorted(range(len(values)), key=values.__getitem__)


def test_sbert_int8_runs_close_to_float_with_the_same_order(minilm_path):
    float_cos = _raws(SentenceCosineMetric(model=minilm_path, embedding_cache_mb=0))
    int8 = SentenceCosineMetric(model=minilm_path, embedding_cache_mb=0, quantize="int8")
    int8_cos = _raws(int8)
    assert count_int8_linears(int8.loaded().model) == MINILM_LINEARS
    assert int8.loaded().device == "cpu"
    diffs = [abs(a - b) for a, b in zip(float_cos, int8_cos, strict=True)]
    assert max(diffs) < 0.1
    assert max(diffs) > 1e-6  # the weights really were rounded
    assert _order(int8_cos) == _order(float_cos)
    assert int8_cos[5] == pytest.approx(1.0, abs=1e-5)  # identical sentences stay identical


def test_bertscore_int8_runs_close_to_float(minilm_path):
    f1 = _raws(BertScoreMetric(model=minilm_path, embedding_cache_mb=0, alignment=False))
    int8 = BertScoreMetric(
        model=minilm_path, embedding_cache_mb=0, alignment=False, quantize="int8"
    )
    int8_f1 = _raws(int8)
    diffs = [abs(a - b) for a, b in zip(f1, int8_f1, strict=True)]
    assert 1e-6 < max(diffs) < 0.1
    assert int8_f1[5] == pytest.approx(1.0, abs=1e-5)
    assert "quantize" in int8.versions()


def test_cross_encoder_int8_runs_close_to_float(tiny_regression_model):
    float_logits = _raws(MeaningBertMetric(model=tiny_regression_model))
    int8 = MeaningBertMetric(model=tiny_regression_model, quantize="int8")
    int8_logits = _raws(int8)
    assert count_int8_linears(int8.loaded().model) > 0
    for a, b in zip(float_logits, int8_logits, strict=True):
        assert b == pytest.approx(a, abs=0.05)


def test_native_encoder_quantises_as_transformers_does(tiny_encoder, monkeypatch):
    """The encoder run without transformers hands its linear layers over to quantisation:
    the same int8 model as transformers' BertModel gives the same vectors."""
    native = _raws(SentenceCosineMetric(model=tiny_encoder, embedding_cache_mb=0, quantize="int8"))
    clear_model_cache()
    monkeypatch.setenv(NATIVE_ENV, "0")
    try:
        metric = SentenceCosineMetric(model=tiny_encoder, embedding_cache_mb=0, quantize="int8")
        assert type(metric.loaded().model).__name__ == "BertModel"
        assert count_int8_linears(metric.loaded().model) >= 3 * 6  # (and an unused pooler)
        via_transformers = _raws(metric)
    finally:
        clear_model_cache()
    assert via_transformers == pytest.approx(native, abs=1e-6)


def test_int8_changes_the_config_hash_and_name_and_float_keeps_its_own(minilm_path):
    for cls in (SentenceCosineMetric, BertScoreMetric, MeaningBertMetric):
        plain, off, int8 = cls(), cls(quantize=None), cls(quantize="int8")
        assert off.config_hash() == plain.config_hash()
        assert "quantize" not in plain.score_config()  # float runs keep their old hash
        assert int8.score_config()["quantize"] == "int8"
        assert int8.config_hash() != plain.config_hash()
        name = metric_canonical_name(int8)
        assert "quantize=int8" in name
        (back,) = configured_names([name], [])  # the printed name parses back to int8
        assert cls(**back.config).config_hash() == int8.config_hash()


def test_int8_vectors_never_come_from_the_float_cache(minilm_path):
    """Float vectors cached in memory first: the int8 run computes its own."""
    pairs = PAIRS[:2]
    float_cos = _raws(SentenceCosineMetric(model=minilm_path), pairs)
    int8_cos = _raws(SentenceCosineMetric(model=minilm_path, quantize="int8"), pairs)
    again = _raws(SentenceCosineMetric(model=minilm_path, quantize="int8"), pairs)
    assert int8_cos != float_cos
    assert again == int8_cos


def test_int8_is_refused_on_a_gpu():
    metric = SentenceCosineMetric(device="cuda", quantize="int8")
    found = metric.availability()
    assert not found.ok
    assert "CPU only" in found.reason and "device=cpu" in found.reason
    with pytest.raises(UserError, match="CPU only"):
        metric.loaded()


def test_unknown_quantize_value_is_refused():
    with pytest.raises(ValueError, match="quantize must be one of 'int8', None"):
        SentenceCosineMetric(quantize="int4")


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory, minilm_path: str) -> str:
    """An encoder whose layers are GPT-2's Conv1D, not torch.nn.Linear."""
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=30522, n_embd=32, n_layer=1, n_head=2, n_positions=128, bos_token_id=None
    )
    config.eos_token_id = None
    return _save_with_tokenizer(GPT2Model(config), tmp_path_factory.mktemp("gpt2"), minilm_path)


def test_a_model_without_linear_layers_is_refused_by_name(tiny_gpt2):
    metric = SentenceCosineMetric(model=tiny_gpt2, quantize="int8", embedding_cache_mb=0)
    assert metric.availability().ok  # known only once loaded
    with pytest.raises(UserError) as refused:
        metric.score_batch(PAIRS[:1])
    message = str(refused.value)
    assert repr(tiny_gpt2) in message
    assert "cannot be quantised to int8" in message and "torch.nn.Linear" in message
    assert Path(tiny_gpt2).is_dir()
    # Without quantize the same model scores.
    assert SentenceCosineMetric(model=tiny_gpt2, embedding_cache_mb=0).score_batch(PAIRS[:1])


def _runs(study) -> list[tuple[str, dict, str, str | None]]:
    with study.session() as s:
        rows = s.connection().exec_driver_sql(
            "SELECT label, config, config_hash, device FROM metric_run "
            "WHERE metric = 'sbert_cosine' ORDER BY id"
        )
        return [(label, json.loads(config), h, device) for label, config, h, device in rows]


def _values(study, run_label: str) -> dict[int, float]:
    with study.session() as s:
        rows = s.connection().exec_driver_sql(
            "SELECT sc.item_id, sc.value FROM score sc JOIN metric_run r ON r.id = sc.run_id "
            "WHERE r.label = ?",
            (run_label,),
        )
        return dict(rows.fetchall())


def test_the_scoring_job_stores_int8_as_its_own_run(new_study):
    """Through the job: float first, then int8 on the same items: a second run with its own
    config and scores, not the float ones served from the store; int8 again is cached."""
    add_items(new_study, [(s, o, (), "sys-a") for s, o in SENTENCES[:4]])
    plain = ScoreRequest(new_study.path, ["sbert_cosine"], {"device": "auto"})
    int8 = ScoreRequest(new_study.path, ["sbert_cosine[quantize=int8]"], {"device": "auto"})
    assert score_study(plain, JobContext())[0].status == "done"
    (first,) = score_study(int8, JobContext())
    assert first.status == "done" and first.scored == 4 and first.cached == 0
    (again,) = score_study(int8, JobContext())
    assert again.scored == 0
    runs = _runs(new_study)
    assert len(runs) == 2
    (f_label, f_config, f_hash, _), (q_label, q_config, q_hash, q_device) = runs
    assert f_config.get("quantize") is None and q_config["quantize"] == "int8"
    assert f_hash != q_hash and "quantize=int8" in q_label and q_device == "cpu"
    f_values, q_values = _values(new_study, f_label), _values(new_study, q_label)
    assert f_values.keys() == q_values.keys() and f_values != q_values
