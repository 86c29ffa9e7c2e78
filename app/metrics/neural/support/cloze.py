"""What the cloze metrics share: sentence splitting, stop words and masked-token prediction.

Cloze metrics ask a masked language model to fill in hidden words of the source, once with
the output as help and once without; the output preserved meaning if it helps. They need a
masked-LM head (e.g. bert-base-uncased), which is not shipped, so they run only when the user
configures one (`mlm_model`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from meaningbench.errors import UserError
from meaningbench.metrics.base import Availability
from meaningbench.metrics.neural.support.batching import run_in_batches
from meaningbench.metrics.neural.support.common import MODEL_OPTIONS, NeuralMetric
from meaningbench.metrics.neural.support.models import LoadedModel
from meaningbench.runtime import CancelToken

MAX_TOKENS = 512
CLOZE_OPTIONS: dict[str, Any] = {"mlm_model": None, **{**MODEL_OPTIONS, "batch_size": 32}}

# English function words: never keywords (RAKE splits phrases at them).
_STOPWORD_TEXT = """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having
    he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've
    if in into is isn't it it's its itself let's me more most mustn't my myself no nor not of
    off on once only or other ought our ours ourselves out over own same shan't she she'd she'll
    she's should shouldn't so some such than that that's the their theirs them themselves then
    there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's
    where where's which while who who's whom why why's will with won't would wouldn't you
    you'd you'll you're you've your yours yourself yourselves also said says say mr mrs ms
    s t d ll m re ve"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Sentences of a text: a break after . ! ? followed by a capital or digit.

    A regex rather than NLTK punkt, whose data is not available offline.
    """
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip())]
    return [p for p in parts if p]


@dataclass
class ClozeInput:
    """One masked model input: ids, segment ids and the masked positions with their answers."""

    input_ids: list[int]
    token_type_ids: list[int]
    answers: dict[int, int]  # position → original token id


def mask_id(loaded: LoadedModel) -> int:
    mid = loaded.tokenizer.mask_token_id
    if mid is None:
        raise UserError(f"model {loaded.ref.name!r} has no [MASK] token: not a masked LM")
    return int(mid)


def predict_masked(
    loaded: LoadedModel,
    inputs: Sequence[ClozeInput],
    batch_size: int,
    cancel: CancelToken | None = None,
) -> list[list[bool]]:
    """For each input, whether the model's top prediction at each masked position is right."""
    import torch

    pad = loaded.tokenizer.pad_token_id or 0
    use_types = int(getattr(loaded.model.config, "type_vocab_size", 0) or 0) > 1

    def forward(batch: list[ClozeInput]) -> list[list[bool]]:
        longest = max(len(x.input_ids) for x in batch)
        ids = torch.full((len(batch), longest), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), longest), dtype=torch.long)
        types = torch.zeros((len(batch), longest), dtype=torch.long)
        for row, x in enumerate(batch):
            n = len(x.input_ids)
            ids[row, :n] = torch.tensor(x.input_ids)
            mask[row, :n] = 1
            types[row, :n] = torch.tensor(x.token_type_ids)
        kwargs = {"input_ids": ids.to(loaded.device), "attention_mask": mask.to(loaded.device)}
        if use_types:
            kwargs["token_type_ids"] = types.to(loaded.device)
        with torch.inference_mode():
            logits = loaded.model(**kwargs).logits
        out: list[list[bool]] = []
        for row, x in enumerate(batch):
            positions = list(x.answers)
            if not positions:
                out.append([])
                continue
            pred = logits[row, positions].argmax(dim=-1).cpu().tolist()
            out.append([p == x.answers[pos] for p, pos in zip(pred, positions, strict=True)])
        return out

    return run_in_batches(
        list(inputs), [len(x.input_ids) for x in inputs], forward, batch_size, cancel
    )


class ClozeMetric(NeuralMetric):
    """A metric that needs the masked LM named by `mlm_model`."""

    model_kind = "mlm"
    model_option = "mlm_model"

    def availability(self) -> Availability:
        if not self.model_name():
            return Availability(
                False,
                f"{self.info.label} needs a masked language model: set mlm_model to a local "
                "directory or a hub id with a masked-LM head (e.g. bert-base-uncased)",
                "weights",
                f"{self.name}[{self.model_option}=PATH_OR_HUB_ID]",
            )
        return super().availability()

    def loaded(self) -> LoadedModel:
        if not self.model_name():
            raise UserError(self.availability().reason)
        return super().loaded()
