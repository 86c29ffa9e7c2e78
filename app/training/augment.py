"""Training examples from rated items, with the MeaningBERT study's augmentation.

- `swap`: each rated pair in both orders, (source, output) and (output, source), with the
  same target: meaning preservation is judged symmetric, and the model should not learn
  which side is the longer one.
- `identical`: each distinct source paired with itself, target 100.
- `unrelated`: each distinct source paired with a text that shares no meaning, target 0 —
  half of them a real sentence of the same split under the overlap bar of the sanity checks
  (ROUGE-1/2/L < 0.20, BLEU < 20), the other half (and any source without such a sentence)
  a word soup of the split's vocabulary. Unrelated texts come only from the same split, so
  no test sentence leaks into training through the augmentation.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from meaningbench.analysis.controls import build_vocabulary, make_word_soup, sample_unrelated

IDENTICAL_TARGET = 100.0
UNRELATED_TARGET = 0.0


@dataclass(frozen=True)
class Example:
    text_a: str
    text_b: str
    target: float
    kind: str  # rated | rated-swapped | identical | unrelated | unrelated-swapped
    item_id: int | None = None


def rated_examples(items: pd.DataFrame, *, swap: bool) -> list[Example]:
    out: list[Example] = []
    for item_id, source, output, target in zip(
        items["item_id"], items["source"], items["output"], items["target"], strict=True
    ):
        out.append(Example(source, output, float(target), "rated", int(item_id)))
        if swap and output != source:
            out.append(Example(output, source, float(target), "rated-swapped", int(item_id)))
    return out


def _unrelated_text(
    source: str,
    candidates: Sequence[str],
    vocabulary: Sequence[str],
    rng: random.Random,
) -> str | None:
    if rng.random() < 0.5:
        sampled = sample_unrelated(source, candidates, rng, tries=20)
        if sampled is not None:
            return sampled
    try:
        return make_word_soup(source, vocabulary, rng)
    except ValueError:  # a vocabulary with no word outside the source: skip this control
        return None


def control_examples(
    items: pd.DataFrame, *, identical: bool, unrelated: bool, swap: bool, rng: random.Random
) -> list[Example]:
    """Identical and unrelated pairs for the distinct sources of `items` (one split)."""
    sources = sorted(set(items["source"]))
    out: list[Example] = []
    if identical:
        out.extend(Example(s, s, IDENTICAL_TARGET, "identical") for s in sources)
    if unrelated:
        candidates = sorted(set(items["source"]) | set(items["output"]))
        vocabulary = build_vocabulary(candidates)
        for source in sources:
            text = _unrelated_text(source, candidates, vocabulary, rng)
            if text is None:
                continue
            out.append(Example(source, text, UNRELATED_TARGET, "unrelated"))
            if swap:
                out.append(Example(text, source, UNRELATED_TARGET, "unrelated-swapped"))
    return out


def build_examples(
    items: pd.DataFrame, augment: Sequence[str], *, seed: int | str
) -> list[Example]:
    """All training (or validation) examples of one split part, deterministic in `seed`."""
    swap = "swap" in augment
    examples = rated_examples(items, swap=swap)
    examples.extend(
        control_examples(
            items,
            identical="identical" in augment,
            unrelated="unrelated" in augment,
            swap=swap,
            rng=random.Random(str(seed)),
        )
    )
    return examples


def heldout_examples(items: pd.DataFrame) -> list[Example]:
    """The held-out items as the battery scores them: (source, output), no augmentation."""
    return rated_examples(items, swap=False)
