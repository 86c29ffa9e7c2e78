"""MeaningBERT (Beauchemin et al. 2023): a cross-encoder that regresses meaning preservation.

BERT with a one-output regression head reads the pair (source, output), truncated
longest-first to 512 tokens; its logit is the score on 0–100. raw = the logit (it may fall
outside 0–100), value = the logit clipped to 0–100. Any checkpoint of that shape works: the
public one (hub id `davebulaval/MeaningBERT`, when online or cached) or a local directory, such
as one trained on a study's ratings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from meaningbench.errors import UserError
from meaningbench.metrics.base import ItemScore, MetricInfo, Pair
from meaningbench.metrics.neural.support.batching import run_in_batches
from meaningbench.metrics.neural.support.common import ENCODER_OPTIONS, NeuralMetric
from meaningbench.metrics.neural.support.models import LoadedModel
from meaningbench.metrics.neural.support.onnx_encoder import LOGITS, onnx_part, with_torch
from meaningbench.runtime import CancelToken

DEFAULT_MEANINGBERT = "davebulaval/MeaningBERT"
MAX_PAIR_TOKENS = 512


def pair_logits(
    loaded: LoadedModel,
    pairs: Sequence[tuple[str, str]],
    batch_size: int = 32,
    cancel: CancelToken | None = None,
) -> list[float]:
    """The first logit of a sequence-classification model for each (first, second) pair."""
    max_len = min(MAX_PAIR_TOKENS, loaded.max_length)
    forward = _arrays_forward if loaded.torchless else _torch_forward
    lengths = [len(a) + len(b) for a, b in pairs]  # characters: a cheap proxy for tokens
    return run_in_batches(
        list(pairs), lengths, lambda b: forward(loaded, b, max_len), batch_size, cancel
    )


def _encoded(loaded: LoadedModel, batch: list[tuple[str, str]], max_len: int, **kw: Any) -> Any:
    """The batch's pairs tokenized as transformers' cross-encoders read them."""
    return loaded.tokenizer(
        [a for a, _ in batch],
        [b for _, b in batch],
        padding=True,
        truncation="longest_first",
        max_length=max_len,
        **kw,
    )


def _torch_forward(loaded: LoadedModel, batch: list[tuple[str, str]], max_len: int) -> list[float]:
    import torch

    enc = {
        k: v.to(loaded.device)
        for k, v in _encoded(loaded, batch, max_len, return_tensors="pt").items()
    }
    runner = onnx_part(loaded, LOGITS)
    with torch.inference_mode():
        if runner is not None:
            logits = runner(enc["input_ids"], enc["attention_mask"], enc.get("token_type_ids"))
        else:
            logits = loaded.model(**enc).logits
    return [float(x) for x in logits[:, 0].float().cpu()]


def _arrays_forward(loaded: LoadedModel, batch: list[tuple[str, str]], max_len: int) -> list[float]:
    """For a record without torch: the pairs tokenized by `tokenizers`, the graph fed numpy
    arrays (torch's, when the export cannot run after all)."""
    import numpy as np

    runner = onnx_part(loaded, LOGITS)
    if runner is None:
        return _torch_forward(with_torch(loaded), batch, max_len)
    enc = _encoded(loaded, batch, max_len)
    names = {"ids": "input_ids", "mask": "attention_mask", "types": "token_type_ids"}
    given = {k: np.asarray(enc[name], dtype=np.int64) for k, name in names.items()}
    return [float(x) for x in runner.arrays(given)[:, 0]]


class MeaningBertMetric(NeuralMetric):
    info = MetricInfo(
        name="meaningbert",
        label="MeaningBERT",
        family="neural",
        description="Cross-encoder regression on (source, output): the logit is the 0–100 score.",
        needs_model=True,
        reference="davebulaval/MeaningBERT (Beauchemin et al. 2023)",
        parity_test="tests/metrics/neural/test_meaningbert.py::test_logit_is_the_score",
    )
    model_kind = "cross-encoder"
    defaults = {"model": DEFAULT_MEANINGBERT, **{**ENCODER_OPTIONS, "batch_size": 32}}
    # Added after scores existed: float runs keep their config hash.
    hashed_when_set: ClassVar[frozenset[str]] = frozenset({"quantize"})

    def onnx_part(self) -> str:
        return LOGITS

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if not pairs:
            return []
        loaded = self.scoring_model()
        n_labels = int(getattr(loaded.model.config, "num_labels", 1))
        if n_labels != 1:
            raise UserError(
                f"model {self.model_name()!r} is a classifier with {n_labels} labels, "
                "not a one-output regression model"
            )
        logits = pair_logits(
            loaded,
            [(p.source, p.output) for p in pairs],
            int(self.config["batch_size"]),
            cancel,
        )
        # What `explain` says ran the model (torch when absent).
        onnx = loaded.backend == "onnx"
        return [
            ItemScore(min(100.0, max(0.0, x)), x, {"backend": "onnx"} if onnx else {})
            for x in logits
        ]
