"""BLANC-help (Vasilyev et al. 2020), with the source as the document and the output as the
summary.

Each source sentence is tokenized and masked evenly: with gap 2, masking k puts [MASK] on
every token whose position ≡ k (mod 2) and that is long enough (a whole word of ≥ 4
characters, a word-initial piece of ≥ 2, never a continuation piece). Every masking is read
twice by the masked LM: after the output ("help") and after as many "." tokens ("filler"),
so positions match. Over all masked tokens, S[b][h] counts (filler right?, help right?);
BLANC = (S01 − S10) / ΣS, in [−1, 1]. These are the defaults of the authors' `blanc` package
(0.3.4). raw = BLANC, value = 100·max(0, BLANC).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from meaningbench.metrics.base import ItemScore, MetricInfo, Pair
from meaningbench.metrics.neural.support.cloze import (
    CLOZE_OPTIONS,
    MAX_TOKENS,
    ClozeInput,
    ClozeMetric,
    mask_id,
    predict_masked,
    split_sentences,
)
from meaningbench.runtime import CancelToken

WORDPIECE_PREFIX = "##"


def long_enough(token: str, next_token: str, lengths: tuple[int, int, int]) -> bool:
    normal, lead, followup = lengths
    if token.startswith(WORDPIECE_PREFIX):
        return len(token) - len(WORDPIECE_PREFIX) >= followup
    if next_token.startswith(WORDPIECE_PREFIX):
        return len(token) >= lead
    return len(token) >= normal


def even_maskings(
    tokens: Sequence[str], gap: int, lengths: tuple[int, int, int], gap_mask: int = 1
) -> list[list[int]]:
    """For each offset, the positions masked (maskings that mask nothing are dropped)."""
    gap = min(gap, len(tokens))
    maskings = []
    for modulus in range(gap):
        positions = []
        for idx, token in enumerate(tokens):
            nxt = tokens[idx + 1] if idx + 1 < len(tokens) else ""
            off = idx % gap
            if gap == 1:
                can = True
            elif modulus + gap_mask >= gap:
                can = off >= modulus or off < (modulus + gap_mask) % gap
            else:
                can = modulus <= off < modulus + gap_mask
            if can and long_enough(token, nxt, lengths):
                positions.append(idx)
        if positions:
            maskings.append(positions)
    return maskings


class BlancHelpMetric(ClozeMetric):
    info = MetricInfo(
        name="blanc_help",
        label="BLANC-help",
        family="neural",
        description="How much the output helps a masked LM fill in the source's masked words.",
        needs_model=True,
        reference="the authors' blanc package 0.3.4 (BlancHelp)",
        parity_test="tests/metrics/neural/test_cloze.py::test_blanc_equals_the_authors_package",
    )
    defaults = {
        **CLOZE_OPTIONS,
        "gap": 2,
        "min_token_length_normal": 4,
        "min_token_length_lead": 2,
        "min_token_length_followup": 100,
        "filler_token": ".",
    }

    def _inputs(self, loaded: Any, pair: Pair) -> list[tuple[ClozeInput, ClozeInput]]:
        tok = loaded.tokenizer
        cls_id, sep_id = tok.cls_token_id, tok.sep_token_id
        mid = mask_id(loaded)
        lengths = (
            int(self.config["min_token_length_normal"]),
            int(self.config["min_token_length_lead"]),
            int(self.config["min_token_length_followup"]),
        )
        help_tokens = tok.tokenize(unicodedata.normalize("NFKD", pair.output))
        pairs = []
        for sentence in split_sentences(unicodedata.normalize("NFKD", pair.source)):
            sent = tok.tokenize(sentence)
            # Fit [CLS] help sentence [SEP] into the model: cut the sentence to at most
            # MAX_TOKENS − 2 tokens, then the help from its end (the package cuts whole
            # summary sentences first; the difference shows only on inputs over 512 tokens).
            sent = sent[: MAX_TOKENS - 2]
            helper = help_tokens[: MAX_TOKENS - 2 - len(sent)]
            sent_ids = tok.convert_tokens_to_ids(sent)
            help_ids = tok.convert_tokens_to_ids(helper)
            filler_ids = tok.convert_tokens_to_ids([self.config["filler_token"]] * len(helper))
            offset = 1 + len(helper)
            for positions in even_maskings(sent, int(self.config["gap"]), lengths):
                masked = list(sent_ids)
                for p in positions:
                    masked[p] = mid
                answers = {p + offset: sent_ids[p] for p in positions}
                ids_help = [cls_id, *help_ids, *masked, sep_id]
                ids_fill = [cls_id, *filler_ids, *masked, sep_id]
                types = [0] * len(ids_help)
                pairs.append(
                    (ClozeInput(ids_help, types, answers), ClozeInput(ids_fill, types, answers))
                )
        return pairs

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if not pairs:
            return []
        loaded = self.loaded()
        per_pair = [self._inputs(loaded, p) for p in pairs]
        flat = [x for inputs in per_pair for couple in inputs for x in couple]
        correct = predict_masked(loaded, flat, int(self.config["batch_size"]), cancel)
        results = []
        at = 0
        for inputs in per_pair:
            s = [[0, 0], [0, 0]]
            for _ in inputs:
                helped, base = correct[at], correct[at + 1]
                at += 2
                for h, b in zip(helped, base, strict=True):
                    s[int(b)][int(h)] += 1
            total = s[0][0] + s[0][1] + s[1][0] + s[1][1]
            blanc = (s[0][1] - s[1][0]) / total if total else 0.0
            details = {"S": s, "n_masked": total}
            results.append(ItemScore(value=100.0 * max(0.0, blanc), raw=blanc, details=details))
        return results
