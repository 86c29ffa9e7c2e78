"""BLEURT (Sellam et al. 2020; the BLEURT-20 checkpoints of Pu et al. 2021): a learned
regression of how well a candidate keeps a reference's meaning.

A BERT-style cross-encoder reads (reference, candidate), truncated longest-first to the
checkpoint's length, and its logit is the score; `bleurt-pytorch`'s conversions of Google's
checkpoints (`lucadiliello/BLEURT-20`, `lucadiliello/bleurt-base-128`, …) load as they are.
raw = the logit (BLEURT-20 gives roughly 0–1, older checkpoints an unbounded scale);
value = 100·raw clipped to 0–100. With several references the best one counts (the maximum,
as LENS and the multi-reference BLEURT studies do); each reference's logit is kept in the
details. The candidate is the output; the reference is the source or the human references
(`refs=`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from meaningbench.errors import UserError
from meaningbench.metrics.base import Availability, ItemScore, MetricInfo, Pair, pair_references
from meaningbench.metrics.neural.support.batching import run_in_batches
from meaningbench.metrics.neural.support.common import MODEL_OPTIONS, NeuralMetric
from meaningbench.metrics.neural.support.models import (
    ModelRef,
    offline,
    resolve_device,
    resolve_model,
)
from meaningbench.runtime import CancelToken

DEFAULT_BLEURT = "lucadiliello/BLEURT-20"
# The sentencepiece vocabulary of the BLEURT-20 family (a WordPiece vocab.txt otherwise).
SP_VOCAB = "spm.model"
BLEURT_EXTRA = "pip install meaningbench[bleurt]"


def _has_sentencepiece() -> bool:
    import importlib.util

    return importlib.util.find_spec("sentencepiece") is not None


class LoadedBleurt:
    def __init__(self, ref: ModelRef, model: Any, tokenizer: Any, device: str) -> None:
        self.ref, self.model, self.tokenizer, self.device = ref, model, tokenizer, device

    @property
    def max_length(self) -> int:
        limit = int(getattr(self.tokenizer, "model_max_length", 512) or 512)
        return min(limit, int(self.model.config.max_position_embeddings))


_LOADED: dict[tuple[str, str], LoadedBleurt] = {}
_LOCK = threading.Lock()


def _folder(ref: ModelRef) -> Path:
    if ref.is_local:
        return Path(ref.location)
    from huggingface_hub import snapshot_download

    # A named hub id downloads only when online and not cached (availability says so first).
    local_only = ref.revision is not None or offline()
    try:
        return Path(snapshot_download(ref.location, local_files_only=local_only))
    except Exception as exc:
        raise UserError(
            f"BLEURT model {ref.name!r} is not available here: {exc}; "
            "give bleurt[model=PATH] a local checkpoint folder"
        ) from exc


def _tokenizer(folder: Path) -> Any:
    import transformers

    if (folder / SP_VOCAB).exists():
        if not _has_sentencepiece():
            raise UserError(f"BLEURT's sentencepiece vocabulary needs {BLEURT_EXTRA}")
        # bleurt-pytorch's BleurtSPTokenizer is DebertaV2Tokenizer with BERT's special tokens.
        return transformers.DebertaV2Tokenizer(
            vocab_file=str(folder / SP_VOCAB),
            do_lower_case=False,
            bos_token="[CLS]",
            eos_token="[SEP]",
            unk_token="[UNK]",
            sep_token="[SEP]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            mask_token="[MASK]",
        )
    bert = getattr(transformers, "BertTokenizerFast", None) or transformers.BertTokenizer
    return bert.from_pretrained(str(folder), local_files_only=True)


def load_bleurt(name: str, device: str = "auto") -> LoadedBleurt:
    """Load (once per process) a BLEURT checkpoint and its tokenizer."""
    ref = resolve_model(name)
    dev = resolve_device(device)
    key = (ref.fingerprint(), dev)
    with _LOCK:
        hit = _LOADED.get(key)
        if hit is not None:
            return hit
        from meaningbench.metrics.neural.support.bleurt_model import load_regressor

        folder = _folder(ref)
        try:
            tokenizer = _tokenizer(folder)
        except (OSError, ValueError) as exc:
            raise UserError(f"BLEURT model {name!r} has no usable tokenizer: {exc}") from exc
        model = load_regressor(folder).to(dev)
        loaded = LoadedBleurt(ref, model, tokenizer, dev)
        _LOADED[key] = loaded
        return loaded


def bleurt_logits(
    loaded: LoadedBleurt,
    pairs: Sequence[tuple[str, str]],
    batch_size: int = 32,
    cancel: CancelToken | None = None,
) -> list[float]:
    """The logit of each (reference, candidate) pair, in length-sorted batches."""
    import torch

    tok = loaded.tokenizer

    def forward(batch: list[tuple[str, str]]) -> list[float]:
        enc = tok(
            [r for r, _ in batch],
            [c for _, c in batch],
            padding=True,
            truncation="longest_first",
            max_length=loaded.max_length,
            return_tensors="pt",
        )
        with torch.inference_mode():
            logits = loaded.model(
                enc["input_ids"].to(loaded.device),
                enc["attention_mask"].to(loaded.device),
                enc.get("token_type_ids").to(loaded.device)
                if enc.get("token_type_ids") is not None
                else None,
            )
        return [float(x) for x in logits[:, 0].float().cpu()]

    lengths = [len(a) + len(b) for a, b in pairs]
    return run_in_batches(list(pairs), lengths, forward, batch_size, cancel)


class BleurtMetric(NeuralMetric):
    info = MetricInfo(
        name="bleurt",
        label="BLEURT",
        family="neural",
        description="Learned regression on (reference, output) (Sellam et al. 2020); "
        "100·logit clipped to 0–100, the best reference counts.",
        needs_references=True,
        needs_model=True,
        reference="bleurt-pytorch 0.0.1 `BleurtForSequenceClassification` (model code ported)",
        parity_test="tests/metrics/test_bleurt.py::test_logits_match_the_package_model",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "model": DEFAULT_BLEURT,
        "reference_mode": "source",
        # fp32 only: the port runs the weights as the package does
        "device": MODEL_OPTIONS["device"],
        "batch_size": 32,
    }

    def availability(self) -> Availability:
        found = super().availability()
        if not found.ok:
            return found
        try:
            ref = resolve_model(self.model_name())
        except UserError:
            return found
        if ref.is_local and (Path(ref.location) / SP_VOCAB).exists() and not _has_sentencepiece():
            return Availability(
                False, "its sentencepiece vocabulary needs the sentencepiece package",
                "extra", BLEURT_EXTRA,
            )  # fmt: skip
        return found

    def versions(self) -> dict[str, str]:
        import torch
        import transformers

        out = {"torch": torch.__version__, "transformers": transformers.__version__}
        try:
            ref = resolve_model(self.model_name())
            if ref.revision:
                out["model_revision"] = ref.revision
        except UserError:
            pass
        return out

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if not pairs:
            return []
        loaded = load_bleurt(str(self.model_name()), str(self.config.get("device", "auto")))
        if loaded.model.config.num_labels != 1:
            raise UserError(f"model {self.model_name()!r} is not a one-output BLEURT regressor")
        flat = [(ref, p.output) for p in pairs for ref in pair_references(p)]
        logits = bleurt_logits(loaded, flat, int(self.config["batch_size"]), cancel)
        out: list[ItemScore] = []
        start = 0
        for p in pairs:
            n = len(pair_references(p))
            mine = logits[start : start + n]
            start += n
            best = max(mine)
            details = {"per_reference": mine} if n > 1 else {}
            out.append(ItemScore(min(100.0, max(0.0, 100.0 * best)), best, details))
        return out
