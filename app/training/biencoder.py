"""The Sentence-BERT bi-encoder: each text embedded alone, mean pooling, cosine regression.

As sentence-transformers' `CosineSimilarityLoss` trains it: the two texts of a pair go
through the same encoder, their token embeddings are mean-pooled over the attention mask,
and the MSE between the cosine of the two vectors and the target (0–1) is minimised.
The saved folder is a standard Sentence-Transformers layout — the encoder's `config.json`
and weights at the root with the tokenizer, `modules.json`, `sentence_bert_config.json` and
`1_Pooling/config.json` — so the battery's `sbert_cosine` reads it with its pooling config
and `bertscore` reads it as any encoder, with nothing special for trained models.
torch and transformers are imported inside the functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from meaningbench.errors import UserError
from meaningbench.training.augment import Example
from meaningbench.training.encoding import predict_batches
from meaningbench.training.model import quiet_transformers

POOLING_DIR = "1_Pooling"
ST_FILES = ("modules.json", "sentence_bert_config.json", f"{POOLING_DIR}/config.json")


@dataclass
class TextPairs:
    """Token ids of each side of each example, tokenized alone; targets on 0–100."""

    ids_a: list[list[int]]
    ids_b: list[list[int]]
    targets: np.ndarray
    pad_id: int

    def __len__(self) -> int:
        return len(self.targets)

    @property
    def lengths(self) -> np.ndarray:
        """The longer side: the padded width a batch of such pairs costs."""
        return np.array(
            [max(len(a), len(b)) for a, b in zip(self.ids_a, self.ids_b, strict=True)],
            dtype=np.int64,
        )


def encode_texts(tokenizer: Any, examples: Sequence[Example], max_length: int) -> TextPairs:
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    targets = np.array([e.target for e in examples], dtype=np.float64)
    if not examples:
        return TextPairs([], [], targets, int(pad))

    def ids(texts: list[str]) -> list[list[int]]:
        return list(tokenizer(texts, truncation=True, max_length=max_length)["input_ids"])

    return TextPairs(
        ids([e.text_a for e in examples]), ids([e.text_b for e in examples]), targets, int(pad)
    )


def _padded(rows: list[list[int]], pad_id: int, device: str) -> dict[str, Any]:
    import torch

    width = max(len(r) for r in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        input_ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
        mask[i, : len(r)] = 1
    return {"input_ids": input_ids.to(device), "attention_mask": mask.to(device)}


def _module_class() -> type:
    import torch

    class SentenceEncoder(torch.nn.Module):
        """A transformer encoder whose output is the mean of its last layer's token vectors."""

        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder

        def embed(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask)[0]
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp_min(1e-9)

        def forward(self, a: dict[str, Any], b: dict[str, Any]) -> Any:
            u, v = self.embed(**a), self.embed(**b)
            return torch.nn.functional.cosine_similarity(u, v, dim=-1)

    return SentenceEncoder


def load_encoder(base: str) -> Any:
    """The base model's encoder (no head) wrapped for mean pooling."""
    from transformers import AutoModel

    try:
        with quiet_transformers():
            encoder = AutoModel.from_pretrained(base)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load the base model {base!r}: {exc}") from exc
    if hasattr(encoder, "encoder") and hasattr(encoder, "decoder"):
        encoder = encoder.encoder  # encoder-decoder models: only the encoder embeds
    return _module_class()(encoder)


def cosine_batch(model: Any, data: TextPairs, indices: Sequence[int], device: str) -> Any:
    a = _padded([data.ids_a[i] for i in indices], data.pad_id, device)
    b = _padded([data.ids_b[i] for i in indices], data.pad_id, device)
    return model(a, b).float()


def predict_cosines(
    model: Any,
    data: TextPairs,
    *,
    device: str,
    batch_size: int = 32,
    check: Callable[[], None] | None = None,
) -> np.ndarray:
    """100 × the cosine of each pair (unclipped), in the order of `data`."""

    def cosines(idx: np.ndarray) -> np.ndarray:
        return np.asarray(cosine_batch(model, data, idx.tolist(), device).cpu().numpy() * 100.0)

    return predict_batches(model, data.lengths, batch_size, cosines, check)


def base_st_config(base: str) -> dict[str, Any]:
    """The base folder's sentence_bert_config.json (lower-casing), when it has one."""
    try:
        raw = json.loads((Path(base) / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def save_sentence_transformer(
    model: Any, tokenizer: Any, directory: Path, *, max_length: int, do_lower_case: bool = False
) -> None:
    """The encoder and tokenizer at the root, with the Sentence-Transformers module files."""
    from importlib import metadata

    directory.mkdir(parents=True, exist_ok=True)
    encoder = model.encoder
    with quiet_transformers():
        encoder.save_pretrained(str(directory))
        tokenizer.save_pretrained(str(directory))
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": POOLING_DIR,
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    pooling = {
        "word_embedding_dimension": int(encoder.config.hidden_size),
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
    }
    versions = {}
    for dist in ("transformers", "torch"):
        try:
            versions[dist if dist != "torch" else "pytorch"] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    files = {
        "modules.json": modules,
        "sentence_bert_config.json": {"max_seq_length": max_length, "do_lower_case": do_lower_case},
        f"{POOLING_DIR}/config.json": pooling,
        "config_sentence_transformers.json": {
            "__version__": versions,
            "similarity_fn_name": "cosine",
        },
    }
    for name, payload in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


def load_saved_encoder(directory: Path, device: str) -> Any:
    return load_encoder(str(directory)).to(device).eval()
