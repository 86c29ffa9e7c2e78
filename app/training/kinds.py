"""What differs between the two kinds of model a training makes; the rest is one recipe.

The splits, augmentation, optimiser, schedule, checkpoints, evaluation and card are shared.
A kind says how examples are tokenized, how a batch's loss and a model's 0–100 predictions
are computed, how the model is loaded, saved and read back, and which battery metrics run
the saved folder. Losses are MSEs on the 0–100 scale divided by 100² (the scale the model
learns on); predictions are on 0–100, unclipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from meaningbench.training.augment import Example
from meaningbench.training.request import BI_ENCODER, CROSS_ENCODER, TrainRequest


@dataclass(frozen=True)
class ModelKind:
    name: str
    metric: str  # the battery metric the model is registered for
    metrics: tuple[str, ...]  # every battery metric that runs the saved folder
    description: str

    def encode(self, tokenizer: Any, examples: Sequence[Example], request: TrainRequest) -> Any:
        raise NotImplementedError

    def load_for_training(self, base: str, *, seed: int, mean_target: float) -> Any:
        raise NotImplementedError

    def batch_loss(self, model: Any, data: Any, indices: Sequence[int], device: str) -> Any:
        raise NotImplementedError

    def predict(
        self,
        model: Any,
        data: Any,
        *,
        device: str,
        batch_size: int = 32,
        saved: bool = False,
        check: Callable[[], None] | None = None,
    ) -> np.ndarray:
        raise NotImplementedError

    def save(self, model: Any, tokenizer: Any, directory: Path, request: TrainRequest) -> None:
        raise NotImplementedError

    def load_saved(self, directory: Path, device: str) -> Any:
        raise NotImplementedError

    def battery_metric(self, directory: Path, device: str) -> Any:
        """The battery's own metric on the saved folder (for the sanity checks)."""
        raise NotImplementedError


class CrossEncoderKind(ModelKind):
    def encode(self, tokenizer: Any, examples: Sequence[Example], request: TrainRequest) -> Any:
        from meaningbench.training.encoding import encode

        return encode(tokenizer, examples, request.max_length)

    def load_for_training(self, base: str, *, seed: int, mean_target: float) -> Any:
        from meaningbench.training.model import init_head_bias, load_regressor

        model = load_regressor(base, seed=seed)
        init_head_bias(model, mean_target)
        return model

    def batch_loss(self, model: Any, data: Any, indices: Sequence[int], device: str) -> Any:
        import torch

        from meaningbench.training.encoding import collate
        from meaningbench.training.model import TARGET_SCALE

        batch = collate(data, indices, device)
        target = torch.tensor(
            data.targets[np.asarray(indices)] / TARGET_SCALE, dtype=torch.float32
        ).to(device)
        logits = model(**batch).logits.reshape(-1).float()
        return torch.nn.functional.mse_loss(logits, target)

    def predict(
        self,
        model: Any,
        data: Any,
        *,
        device: str,
        batch_size: int = 32,
        saved: bool = False,
        check: Callable[[], None] | None = None,
    ) -> np.ndarray:
        from meaningbench.training.encoding import predict
        from meaningbench.training.model import TARGET_SCALE

        # A saved model's head has the 0–100 factor folded in; a training one has not.
        scale = 1.0 if saved else TARGET_SCALE
        return predict(model, data, device=device, batch_size=batch_size, scale=scale, check=check)

    def save(self, model: Any, tokenizer: Any, directory: Path, request: TrainRequest) -> None:
        from meaningbench.training.model import save_model

        save_model(model, tokenizer, directory)

    def load_saved(self, directory: Path, device: str) -> Any:
        from meaningbench.training.model import load_saved

        return load_saved(directory, device)

    def battery_metric(self, directory: Path, device: str) -> Any:
        from meaningbench.metrics.neural.meaningbert import MeaningBertMetric

        return MeaningBertMetric(model=str(directory), device=device)


class BiEncoderKind(ModelKind):
    def encode(self, tokenizer: Any, examples: Sequence[Example], request: TrainRequest) -> Any:
        from meaningbench.training.biencoder import encode_texts

        return encode_texts(tokenizer, examples, request.max_length)

    def load_for_training(self, base: str, *, seed: int, mean_target: float) -> Any:
        import torch

        from meaningbench.training.biencoder import load_encoder

        torch.manual_seed(seed)  # dropout draws during training; the encoder has no new head
        return load_encoder(base)

    def batch_loss(self, model: Any, data: Any, indices: Sequence[int], device: str) -> Any:
        import torch

        from meaningbench.training.biencoder import cosine_batch

        target = torch.tensor(data.targets[np.asarray(indices)] / 100.0, dtype=torch.float32).to(
            device
        )
        return torch.nn.functional.mse_loss(cosine_batch(model, data, indices, device), target)

    def predict(
        self,
        model: Any,
        data: Any,
        *,
        device: str,
        batch_size: int = 32,
        saved: bool = False,
        check: Callable[[], None] | None = None,
    ) -> np.ndarray:
        from meaningbench.training.biencoder import predict_cosines

        return predict_cosines(model, data, device=device, batch_size=batch_size, check=check)

    def save(self, model: Any, tokenizer: Any, directory: Path, request: TrainRequest) -> None:
        from meaningbench.training.biencoder import save_sentence_transformer

        save_sentence_transformer(model, tokenizer, directory, max_length=request.max_length)

    def load_saved(self, directory: Path, device: str) -> Any:
        from meaningbench.training.biencoder import load_saved_encoder

        return load_saved_encoder(directory, device)

    def battery_metric(self, directory: Path, device: str) -> Any:
        from meaningbench.metrics.neural.sbert import SentenceCosineMetric

        return SentenceCosineMetric(model=str(directory), device=device)


KIND_OBJECTS: dict[str, ModelKind] = {
    CROSS_ENCODER: CrossEncoderKind(
        CROSS_ENCODER,
        "meaningbert",
        ("meaningbert",),
        "A MeaningBERT-style cross-encoder (one regression output; the logit is a 0–100 "
        "meaning-preservation score for a (source, output) pair)",
    ),
    BI_ENCODER: BiEncoderKind(
        BI_ENCODER,
        "sbert_cosine",
        ("sbert_cosine", "bertscore"),
        "A Sentence-BERT bi-encoder (mean pooling; the cosine of the two texts' embeddings, "
        "× 100, is the meaning-preservation score), usable as the basis of BERTScore too",
    ),
}


def model_kind(request: TrainRequest) -> ModelKind:
    return KIND_OBJECTS[request.kind]
