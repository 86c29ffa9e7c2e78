"""The LENS regression model (Maddela et al. 2023), ported for inference from `lens-metric`
0.2.0 (`RegressionMetricMultiReference`).

`lens-metric` pins pandas < 2, pytorch-lightning 2.0.9 and jsonargparse 3.13, so it cannot
be a dependency of this project; its scoring path is small and lives here: a transformer
encoder, a learned softmax mix of all its layers (with per-sentence layer norm), average
pooling over the tokens, and a feed-forward estimator over
[src, mt, ref, mt·ref, |mt−ref|, mt·src, |mt−src|]. Parameter names are the package's, so a
LENS checkpoint (`checkpoints/model.ckpt` beside `hparams.yaml`) loads unchanged;
tests/metrics/test_lens.py checks the scores against the package's own model on a tiny one.

This module imports torch at the top: it is only imported inside the metric's methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from meaningbench.errors import UserError

CHECKPOINT = Path("checkpoints") / "model.ckpt"
HPARAMS = "hparams.yaml"


@dataclass(frozen=True)
class LensHparams:
    """The hparams.yaml keys the scoring path reads, as the package's model reads them.

    `RegressionMetricMultiReference.__init__` passes its arguments to its base class by
    position and skips four of the base's parameters, so the base's `layer_norm` receives
    the `train_data` value and its `layer_transformation` the batch size: a checkpoint
    saved with training data mixes layers with layer norm, and always with a softmax. The
    port reads them the same way, so it scores as the package does.
    """

    pretrained_model: str
    layer: str | int = "mix"
    pool: str = "avg"
    layer_norm: bool = False
    hidden_sizes: tuple[int, ...] = (2304, 768)
    activations: str = "Tanh"
    final_activation: str | None = None
    class_identifier: str | None = "regression_metric_multi_ref"

    @classmethod
    def read(cls, path: Path) -> LensHparams:
        import yaml

        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if "pretrained_model" not in data:
            raise UserError(f"{path} does not name the LENS encoder (pretrained_model)")
        return cls(
            pretrained_model=str(data["pretrained_model"]),
            layer=data.get("layer", "mix"),
            pool=str(data.get("pool", "avg")),
            layer_norm=bool(data.get("train_data")),
            hidden_sizes=tuple(int(x) for x in data.get("hidden_sizes", (2304, 768))),
            activations=str(data.get("activations", "Tanh")),
            final_activation=data.get("final_activation"),
            class_identifier=data.get("class_identifier", "regression_metric_multi_ref"),
        )

    def check(self) -> None:
        """Refuse what the port does not reproduce, instead of scoring it differently."""
        problems = []
        if self.class_identifier not in (None, "regression_metric_multi_ref"):
            problems.append(f"model class {self.class_identifier!r}")
        if self.layer != "mix":
            problems.append(f"layer={self.layer!r}")
        if self.pool != "avg":
            problems.append(f"pool={self.pool!r}")
        if problems:
            raise UserError(
                "this LENS checkpoint uses " + ", ".join(problems) + "; only the published "
                "LENS configuration (regression_metric_multi_ref, layer=mix, pool=avg) is "
                "supported"
            )


class LayerMix(nn.Module):
    """`lens.modules.LayerwiseAttention` at inference (softmax weights, optional layer norm)."""

    def __init__(self, num_layers: int, layer_norm: bool) -> None:
        super().__init__()
        self.layer_norm = layer_norm
        self.scalar_parameters = nn.ParameterList(
            [nn.Parameter(torch.zeros(1)) for _ in range(num_layers)]
        )
        self.gamma = nn.Parameter(torch.ones(1))

    def forward(self, layers: tuple[torch.Tensor, ...], mask: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(torch.cat(list(self.scalar_parameters)), dim=0)
        if not self.layer_norm:
            mixed = sum(w * t for w, t in zip(torch.split(weights, 1), layers, strict=True))
            return self.gamma * mixed
        m = mask.float()
        broadcast = m.unsqueeze(-1)
        count = m.sum(1) * layers[0].shape[-1]
        pieces = []
        for w, t in zip(torch.split(weights, 1), layers, strict=True):
            masked = t * broadcast
            mean = (masked.reshape(t.shape[0], -1).sum(1) / count).view(-1, 1, 1)
            var = (((masked - mean) * broadcast) ** 2).reshape(t.shape[0], -1).sum(1) / count
            pieces.append(w * ((t - mean) / torch.sqrt(var + 1e-12).view(-1, 1, 1)))
        return self.gamma * sum(pieces)


def _activation(name: str) -> nn.Module:
    if not hasattr(nn, name.title()):
        raise UserError(f"{name} is not an activation function torch knows")
    return getattr(nn, name.title())()  # type: ignore[no-any-return]


class Estimator(nn.Module):
    """`lens.modules.FeedForward` at inference: its `ff` Sequential, dropouts included as
    identities so that the layer indices (and the checkpoint's names) stay the same."""

    def __init__(self, h: LensHparams, in_dim: int) -> None:
        super().__init__()
        sizes = [in_dim, *h.hidden_sizes]
        modules: list[nn.Module] = []
        for a, b in zip(sizes, sizes[1:], strict=False):
            modules += [nn.Linear(a, b), _activation(h.activations), nn.Dropout(0.0)]
        modules.append(nn.Linear(sizes[-1], 1))
        if h.final_activation is not None:
            modules.append(_activation(h.final_activation))
        self.ff = nn.Sequential(*modules)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ff(x)  # type: ignore[no-any-return]


class LensRegressor(nn.Module):
    def __init__(self, hparams: LensHparams, encoder: Any) -> None:
        super().__init__()
        self.hparams = hparams
        holder = nn.Module()  # the package's Encoder wrapper: its weights are `encoder.model.*`
        holder.model = encoder
        self.encoder = holder
        config: Any = encoder.config
        self.num_layers = int(config.num_hidden_layers) + 1
        self.layerwise_attention = LayerMix(self.num_layers, hparams.layer_norm)
        self.estimator = Estimator(hparams, int(config.hidden_size) * 7)

    def sentence_embedding(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, pad_id: int
    ) -> torch.Tensor:
        encoder: Any = self.encoder.model
        out = encoder(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        mixed: torch.Tensor = self.layerwise_attention(tuple(out.hidden_states), attention_mask)
        # lens.models.pooling_utils.average_pooling: pad tokens zeroed, divided by the mask.
        mixed = mixed.float().masked_fill(input_ids.eq(pad_id).unsqueeze(-1), 0.0)
        return mixed.sum(1) / attention_mask.unsqueeze(-1).expand(mixed.shape).float().sum(1)

    def estimate(self, src: torch.Tensor, mt: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        features = torch.cat(
            (src, mt, ref, mt * ref, torch.abs(mt - ref), mt * src, torch.abs(mt - src)), dim=1
        )
        estimated: torch.Tensor = self.estimator(features)
        return estimated.view(-1)


def checkpoint_files(location: Path) -> tuple[Path, Path]:
    """(model.ckpt, hparams.yaml) of a LENS folder, or of a .ckpt given directly."""
    ckpt = location if location.is_file() else location / CHECKPOINT
    if not ckpt.is_file():
        raise UserError(f"{location} has no LENS checkpoint ({CHECKPOINT})")
    hparams = ckpt.parents[1] / HPARAMS
    if not hparams.is_file():
        raise UserError(f"{hparams} is missing: LENS needs it beside its checkpoints folder")
    return ckpt, hparams


def read_state_dict(ckpt: Path) -> Mapping[str, torch.Tensor]:
    try:
        data = torch.load(str(ckpt), map_location="cpu", weights_only=True)
    except Exception as exc:
        raise UserError(f"{ckpt} cannot be read as a LENS checkpoint: {exc}") from exc
    state = data.get("state_dict", data) if isinstance(data, dict) else None
    if not isinstance(state, Mapping):
        raise UserError(f"{ckpt} holds no state_dict")
    return state


def build_regressor(hparams: LensHparams, encoder_config: Any) -> LensRegressor:
    from transformers import AutoModel

    encoder = AutoModel.from_config(encoder_config, add_pooling_layer=False)
    return LensRegressor(hparams, encoder)


def load_state(model: LensRegressor, state: Mapping[str, torch.Tensor], where: str) -> None:
    # The package registers dropout buffers and may keep the encoder's position ids.
    wanted = {
        k: v
        for k, v in state.items()
        if not k.startswith("layerwise_attention.dropout_")
        and not k.endswith(("position_ids", "token_type_ids"))
    }
    missing, unexpected = model.load_state_dict(wanted, strict=False)
    missing = [k for k in missing if not k.endswith(("position_ids", "token_type_ids"))]
    if missing or unexpected:
        shown = ", ".join([*missing, *unexpected][:4])
        raise UserError(f"{where} does not match the LENS model (weights differ: {shown})")
