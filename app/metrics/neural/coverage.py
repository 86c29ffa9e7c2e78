"""Coverage (Laban et al. 2020, The Summary Loop; used for salience in Keep it Simple, 2021),
with the source as the document and the output as the summary.

The source's keywords are ranked with RAKE (word score = degree / frequency, summed over the
candidate phrases a word occurs in); in each sentence the top `mask_ratio` share of its words
that are keywords are masked (every piece of the word). A masked LM reads
"[CLS] output [SEP] masked source [SEP]" and fills the masks. Coverage is the share it gets
right; it is normalised by the share it gets right with an empty output, as Keep it Simple
does: raw = (acc_with − acc_without) / (1 − acc_without); value = 100·max(0, raw).

The papers fine-tune the filling model for this task; with an off-the-shelf masked LM the
score measures the same thing less sharply.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from meaningbench.metrics.base import ItemScore, MetricInfo, Pair
from meaningbench.metrics.neural.support.cloze import (
    CLOZE_OPTIONS,
    MAX_TOKENS,
    STOPWORDS,
    ClozeInput,
    ClozeMetric,
    mask_id,
    predict_masked,
    split_sentences,
)
from meaningbench.runtime import CancelToken

_WORDLIKE = re.compile(r"\w", re.UNICODE)


def rake_word_scores(words: Sequence[str]) -> dict[str, float]:
    """RAKE (Rose et al. 2010) over a word sequence: phrases are runs of content words."""
    phrases: list[list[str]] = []
    current: list[str] = []
    for w in words:
        lw = w.lower()
        if lw in STOPWORDS or not _WORDLIKE.search(lw):
            if current:
                phrases.append(current)
            current = []
        else:
            current.append(lw)
    if current:
        phrases.append(current)
    freq: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for phrase in phrases:
        for w in phrase:
            freq[w] += 1
            degree[w] += len(phrase)
    word_score = {w: degree[w] / freq[w] for w in freq}
    scores: dict[str, float] = {}
    for phrase in phrases:
        phrase_score = sum(word_score[w] for w in phrase)
        for w in set(phrase):
            scores[w] = scores.get(w, 0.0) + phrase_score
    return scores


def _words(tok: Any, text: str) -> list[tuple[str, list[int]]]:
    """The tokenizer's words of `text`, each with its token ids."""
    enc = tok(text, add_special_tokens=False)
    words: dict[int, tuple[str, list[int]]] = {}
    for position, word in enumerate(enc.word_ids()):
        if word is None:
            continue
        if word not in words:
            span = enc.word_to_chars(word)
            words[word] = (text[span.start : span.end], [])
        words[word][1].append(enc["input_ids"][position])
    return [words[k] for k in sorted(words)]


class CoverageMetric(ClozeMetric):
    info = MetricInfo(
        name="coverage",
        label="Coverage",
        family="neural",
        description="How much the output helps a masked LM recover the source's keywords.",
        needs_model=True,
        reference="Laban et al. 2020 (The Summary Loop), as Keep it Simple normalises it",
        parity_test="tests/metrics/neural/test_cloze.py::test_coverage_masks_the_top_keywords",
    )
    defaults = {**CLOZE_OPTIONS, "mask_ratio": 0.2}

    def masked_source(
        self, loaded: Any, source: str
    ) -> tuple[list[int], dict[int, int], list[str]]:
        """Source ids with keywords masked, the answers by position, and the masked words."""
        tok = loaded.tokenizer
        mid = mask_id(loaded)
        sentences = [_words(tok, s) for s in split_sentences(source)]
        ranking = rake_word_scores([w for sent in sentences for w, _ in sent])
        # Highest score first; ties keep first-seen order (a stable sort).
        by_score = sorted(ranking, key=ranking.__getitem__, reverse=True)
        rank = {w: i for i, w in enumerate(by_score)}
        ids: list[int] = []
        answers: dict[int, int] = {}
        masked_words: list[str] = []
        ratio = float(self.config["mask_ratio"])
        for sent in sentences:
            n_mask = int(ratio * len(sent) + 0.5)
            present = sorted(
                {w.lower() for w, _ in sent if w.lower() in rank}, key=rank.__getitem__
            )
            chosen = set(present[:n_mask])
            for word, word_ids in sent:
                if word.lower() in chosen:
                    masked_words.append(word)
                    for i in word_ids:
                        answers[len(ids)] = i
                        ids.append(mid)
                else:
                    ids.extend(word_ids)
        return ids, answers, masked_words

    def _input(
        self, loaded: Any, help_text: str, src_ids: list[int], answers: dict[int, int]
    ) -> ClozeInput:
        tok = loaded.tokenizer
        src_ids = src_ids[: MAX_TOKENS - 3]
        help_ids = tok(help_text, add_special_tokens=False)["input_ids"] if help_text else []
        help_ids = help_ids[: MAX_TOKENS - 3 - len(src_ids)]
        ids = [tok.cls_token_id, *help_ids, tok.sep_token_id, *src_ids, tok.sep_token_id]
        types = [0] * (len(help_ids) + 2) + [1] * (len(src_ids) + 1)
        offset = len(help_ids) + 2
        kept = {p + offset: a for p, a in answers.items() if p < len(src_ids)}
        return ClozeInput(ids, types, kept)

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if not pairs:
            return []
        loaded = self.loaded()
        masked = [self.masked_source(loaded, p.source) for p in pairs]
        inputs = []
        for pair, (ids, answers, _) in zip(pairs, masked, strict=True):
            inputs.append(self._input(loaded, pair.output, ids, answers))
            inputs.append(self._input(loaded, "", ids, answers))
        correct = predict_masked(loaded, inputs, int(self.config["batch_size"]), cancel)
        results = []
        for k, (_, _, words) in enumerate(masked):
            with_help, without = correct[2 * k], correct[2 * k + 1]
            if not with_help:
                results.append(
                    ItemScore(None, None, {}, error="the source has no keywords to mask")
                )
                continue
            acc_with = sum(with_help) / len(with_help)
            acc_without = sum(without) / len(without)
            raw = (acc_with - acc_without) / (1 - acc_without) if acc_without < 1 else 0.0
            details = {
                "acc_with": acc_with,
                "acc_without": acc_without,
                "n_masked": len(with_help),
                "masked_words": words,
            }
            results.append(ItemScore(value=100.0 * max(0.0, raw), raw=raw, details=details))
        return results
