"""LENS (Maddela et al. 2023): a learned simplification metric over source, output and
references.

The source, the output and each reference are lowercased (as `lens.LENS.score` does) and
embedded separately by the checkpoint's encoder; the estimator scores each (source, output,
reference) triple and the best reference counts. raw = LENS's own score (100 × the
estimator's output, or 100 × Φ(output) with `rescale=true`), value = raw clipped to 0–100.

`model` is a LENS folder (`hparams.yaml` + `checkpoints/model.ckpt`), its .ckpt file, or a
hub id (`davidheineman/lens`, read from the Hugging Face cache, or downloaded when online).
The encoder architecture and tokenizer come from the `pretrained_model` its hparams name
(`roberta-large`), or from the `encoder` option (a local folder for offline machines); its
weights come from the checkpoint.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from meaningbench.errors import UserError
from meaningbench.metrics.base import Availability, ItemScore, MetricInfo, Pair, pair_references
from meaningbench.metrics.neural.support.batching import run_in_batches
from meaningbench.metrics.neural.support.common import MODEL_OPTIONS, NeuralMetric
from meaningbench.metrics.neural.support.models import (
    model_availability,
    offline,
    resolve_device,
    resolve_model,
)
from meaningbench.runtime import CancelToken

DEFAULT_LENS = "davidheineman/lens"
FIX = "lens[model=PATH_OR_HUB_ID]"
ENCODER_FIX = "lens[encoder=PATH_OR_HUB_ID]"


def lens_location(name: str, *, download: bool = False) -> Path | None:
    """The local LENS folder or .ckpt for `name`; None when it is a hub id not cached here
    (downloaded first when `download` and online)."""
    path = Path(name).expanduser()
    if path.exists():
        return path
    if path.is_absolute() or name.startswith((".", "~")) or name.count("/") > 1:
        raise UserError(f"LENS checkpoint {name!r} does not exist")
    try:
        from huggingface_hub import snapshot_download, try_to_load_from_cache
    except ImportError:
        return None
    try:
        hit = try_to_load_from_cache(name, "hparams.yaml")
    except Exception:
        hit = None
    if isinstance(hit, str):
        return Path(hit).parent
    if not download or offline():
        return None
    return Path(snapshot_download(name))


class LoadedLens:
    def __init__(self, model: Any, tokenizer: Any, device: str, max_length: int) -> None:
        self.model, self.tokenizer, self.device, self.max_length = (
            model, tokenizer, device, max_length,
        )  # fmt: skip


_LOADED: dict[tuple[str, str, str, str], LoadedLens] = {}
_LOCK = threading.Lock()


def load_lens(name: str, encoder: str | None, device: str = "auto") -> LoadedLens:
    """Load (once per process) a LENS checkpoint with its encoder's config and tokenizer."""
    from meaningbench.metrics.neural.support import lens_model

    location = lens_location(name, download=True)
    if location is None:
        raise UserError(f"LENS checkpoint {name!r} is not available offline; set {FIX}")
    ckpt, hparams_file = lens_model.checkpoint_files(location)
    hparams = lens_model.LensHparams.read(hparams_file)
    hparams.check()
    encoder_name = encoder or hparams.pretrained_model
    dev = resolve_device(device)
    # Rewritten weights or hparams in the same folder load afresh.
    stamp = tuple(f.stat().st_mtime_ns for f in (ckpt, hparams_file)) + (ckpt.stat().st_size,)
    key = (str(ckpt.resolve()), str(stamp), encoder_name, dev)
    with _LOCK:
        hit = _LOADED.get(key)
        if hit is not None:
            return hit
        try:
            ref = resolve_model(encoder_name)
        except UserError as exc:
            raise UserError(f"the LENS encoder is not available: {exc}; set {ENCODER_FIX}") from exc
        from transformers import AutoConfig, AutoTokenizer

        # As the shared loader: a local or cached model never asks the Hub for updates.
        local_only = ref.is_local or ref.revision is not None or offline()
        try:
            config = AutoConfig.from_pretrained(ref.location, local_files_only=local_only)
            tokenizer = AutoTokenizer.from_pretrained(ref.location, local_files_only=local_only)
        except (OSError, ValueError) as exc:
            raise UserError(f"the LENS encoder {encoder_name!r} cannot be loaded: {exc}") from exc
        model = lens_model.build_regressor(hparams, config)
        lens_model.load_state(model, lens_model.read_state_dict(ckpt), str(ckpt))
        model.eval().to(dev)
        # lens.encoders: max_positions = max_position_embeddings − 2, and texts are cut
        # to max_positions − 2 tokens.
        max_length = int(config.max_position_embeddings) - 4
        loaded = LoadedLens(model, tokenizer, dev, max_length)
        _LOADED[key] = loaded
        return loaded


def embed_texts(
    loaded: LoadedLens, texts: Sequence[str], batch_size: int, cancel: CancelToken | None
) -> list[Any]:
    """The LENS sentence embedding of each text (length-sorted, padded batches)."""
    import torch

    pad_id = int(loaded.tokenizer.pad_token_id)

    def forward(batch: list[str]) -> list[Any]:
        enc = loaded.tokenizer(
            batch,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=loaded.max_length,
        )
        ids = enc["input_ids"].to(loaded.device)
        mask = enc["attention_mask"].to(loaded.device)
        with torch.inference_mode():
            emb = loaded.model.sentence_embedding(ids, mask, pad_id)
        return list(emb.cpu())

    return run_in_batches(list(texts), [len(t) for t in texts], forward, batch_size, cancel)


def lens_scores(
    loaded: LoadedLens,
    triples: Sequence[tuple[str, str, str]],
    batch_size: int = 16,
    rescale: bool = False,
    cancel: CancelToken | None = None,
) -> list[float]:
    """LENS's score of each (source, output, reference), each text lowercased as LENS does."""
    import torch

    lowered = [tuple(t.lower() for t in triple) for triple in triples]
    unique = sorted({t for triple in lowered for t in triple})
    index = {t: i for i, t in enumerate(unique)}
    embeddings = embed_texts(loaded, unique, batch_size, cancel)
    out: list[float] = []
    for start in range(0, len(lowered), max(1, batch_size)):
        chunk = lowered[start : start + max(1, batch_size)]
        src, mt, ref = (
            torch.stack([embeddings[index[triple[k]]] for triple in chunk]).to(loaded.device)
            for k in range(3)
        )
        with torch.inference_mode():
            predicted = loaded.model.estimate(src, mt, ref)
        for x in predicted.float().cpu().tolist():
            score = 0.5 * (math.erf(x / 2**0.5) + 1) if rescale else x
            out.append(100.0 * score)
    return out


class LensMetric(NeuralMetric):
    info = MetricInfo(
        name="lens",
        label="LENS",
        family="neural",
        description="Learned simplification metric over source, output and references "
        "(Maddela et al. 2023); the best reference counts, clipped to 0–100.",
        needs_references=True,
        needs_model=True,
        reference="lens-metric 0.2.0 `LENS.score` (scoring path ported)",
        parity_test="tests/metrics/test_lens.py::test_scores_match_the_package",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "model": DEFAULT_LENS,
        "encoder": None,
        "rescale": False,
        "reference_mode": "source",
        # fp32 only: the port runs the weights as the package does
        "device": MODEL_OPTIONS["device"],
        "batch_size": 16,
    }

    def availability(self) -> Availability:
        name = self.model_name()
        if not name:
            return Availability(False, "LENS needs a checkpoint (model)", "weights", FIX)
        try:
            location = lens_location(name)
        except UserError as exc:
            return Availability(False, str(exc), "weights", FIX)
        if location is None:
            if offline():
                return Availability(
                    False, f"LENS checkpoint {name!r} is not in the Hugging Face cache",
                    "weights", FIX,
                )  # fmt: skip
            return Availability(True, f"{name} will be downloaded from the Hugging Face Hub")
        try:
            from meaningbench.metrics.neural.support.lens_model import CHECKPOINT, HPARAMS

            ckpt = location if location.is_file() else location / CHECKPOINT
            import yaml

            hparams = yaml.safe_load((ckpt.parents[1] / HPARAMS).read_text(encoding="utf-8"))
            encoder = self.config["encoder"] or hparams["pretrained_model"]
        except (OSError, KeyError, TypeError, ImportError) as exc:
            return Availability(
                False, f"{location} is not a LENS checkpoint: {exc}", "weights", FIX
            )
        found = model_availability(str(encoder))
        if not found.ok:
            return Availability(False, f"its encoder: {found.reason}", "weights", ENCODER_FIX)
        return found

    def model_id(self) -> str | None:
        return self.model_name()

    def versions(self) -> dict[str, str]:
        import torch
        import transformers

        return {"torch": torch.__version__, "transformers": transformers.__version__}

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if not pairs:
            return []
        loaded = load_lens(
            str(self.model_name()),
            self.config["encoder"] or None,
            str(self.config.get("device", "auto")),
        )
        triples = [(p.source, p.output, ref) for p in pairs for ref in pair_references(p)]
        scores = lens_scores(
            loaded, triples, int(self.config["batch_size"]), bool(self.config["rescale"]), cancel
        )
        out: list[ItemScore] = []
        start = 0
        for p in pairs:
            n = len(pair_references(p))
            mine = scores[start : start + n]
            start += n
            best = max(mine)
            details = {"per_reference": mine} if n > 1 else {}
            out.append(ItemScore(min(100.0, max(0.0, best)), best, details))
        return out
