"""Training examples from rated items, with the MeaningBERT study's augmentation.

- `swap`: each rated pair in both orders, (source, output) and (output, source), with the
  same target: meaning preservation is judged symmetric, and the model should not learn
  which side is the longer one.
- `identical`: texts of the split paired with themselves, target 100.
- `unrelated`: texts of the split paired with a text that shares no meaning, target 0 —
  half of them a real sentence of another source group of the same split under the overlap
  bar of the sanity checks (ROUGE-1/2/L < 0.20, BLEU < 20), the other half (and any text
  without such a sentence) a word soup of the split's vocabulary; with `swap`, in both
  orders.

How many identical and unrelated pairs: with sanity shares (I, U) (the default), the
identical pairs make up I of the split's examples and the unrelated pairs U, drawn
cyclically from its distinct texts (all sources first, then all outputs, each in a seeded
order). One pair per source was too few to teach the identity check in two epochs: such a
model rated held-out identical pairs 88 on average and none of them 95 or more. With no
shares (`None`, the rule of models trained before the shares existed) each distinct source
gets one identical and one unrelated pair.

Every text comes from the split's own items, so no held-out sentence reaches training
through the augmentation.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from meaningbench.core.controls import build_vocabulary, make_word_soup, sample_unrelated

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


def control_counts(n_rated: int, identical_share: float, unrelated_share: float) -> tuple[int, int]:
    """How many identical and unrelated pairs make up their shares of all examples, when
    the `n_rated` rated examples take the rest (a share of 0: that kind is not added)."""
    rest = 1.0 - identical_share - unrelated_share
    if rest <= 0:
        raise ValueError("the identical and unrelated shares must leave room for rated pairs")
    total = n_rated / rest
    return round(identical_share * total), round(unrelated_share * total)


def _anchors(items: pd.DataFrame, rng: random.Random) -> list[tuple[str, object]]:
    """The split's distinct texts with their source group: every source (the texts the
    sanity checks pair with themselves), then every output that is not also a source."""
    sources: dict[str, object] = {}
    for source, group in zip(items["source"], items["source_group"], strict=True):
        sources.setdefault(source, group)
    outputs: dict[str, object] = {}
    for output, group in zip(items["output"], items["source_group"], strict=True):
        if output not in sources and output.strip():
            outputs.setdefault(output, group)
    ordered: list[tuple[str, object]] = []
    for texts in (sources, outputs):
        part = sorted(texts.items(), key=lambda kv: kv[0])
        rng.shuffle(part)
        ordered.extend(part)
    return ordered


def _cycle(anchors: Sequence[tuple[str, object]], n: int) -> list[tuple[str, object]]:
    return [anchors[i % len(anchors)] for i in range(n)] if anchors else []


def shared_control_examples(
    items: pd.DataFrame,
    *,
    identical: bool,
    unrelated: bool,
    swap: bool,
    shares: tuple[float, float],
    n_rated: int,
    rng: random.Random,
) -> list[Example]:
    """Identical and unrelated pairs that make up their `shares` of the split's examples."""
    n_identical, n = control_counts(
        n_rated, shares[0] if identical else 0.0, shares[1] if unrelated else 0.0
    )
    anchors = _anchors(items, rng)
    out: list[Example] = []
    if identical:
        out.extend(
            Example(t, t, IDENTICAL_TARGET, "identical") for t, _ in _cycle(anchors, n_identical)
        )
    if unrelated:
        vocabulary = build_vocabulary(t for t, _ in anchors)
        # Unrelated partners come from other source groups: an output of the text's own
        # source, however poor, is a rated attempt at its meaning, never a 0 by construction.
        others: dict[object, list[str]] = {}
        for _, group in anchors:
            if group not in others:
                others[group] = [t for t, g in anchors if g != group]
        made = 0
        for text, group in _cycle(anchors, n * 2):
            if made >= n:
                break
            partner = _unrelated_text(text, others[group], vocabulary, rng)
            if partner is None:
                continue
            out.append(Example(text, partner, UNRELATED_TARGET, "unrelated"))
            made += 1
            if swap and made < n:
                out.append(Example(partner, text, UNRELATED_TARGET, "unrelated-swapped"))
                made += 1
    return out


def build_examples(
    items: pd.DataFrame,
    augment: Sequence[str],
    *,
    seed: int | str,
    sanity_share: tuple[float, float] | None = None,
) -> list[Example]:
    """All training (or validation) examples of one split part, deterministic in `seed`.

    `sanity_share`: the shares of the examples that the identical and the unrelated pairs
    make up (None: one of each per distinct source)."""
    swap = "swap" in augment
    examples = rated_examples(items, swap=swap)
    identical, unrelated = "identical" in augment, "unrelated" in augment
    rng = random.Random(str(seed))
    if sanity_share is None:
        controls = control_examples(
            items, identical=identical, unrelated=unrelated, swap=swap, rng=rng
        )
    else:
        controls = shared_control_examples(
            items,
            identical=identical,
            unrelated=unrelated,
            swap=swap,
            shares=sanity_share,
            n_rated=len(examples),
            rng=rng,
        )
    examples.extend(controls)
    return examples


def example_shares(examples: Sequence[Example]) -> dict[str, object]:
    """Counts of each kind of example and the share of the augmented ones, as the card
    records them: `identical`, `unrelated` (both orders) and `swapped` (rated pairs in the
    other order) as shares of all examples, and `augmented`, their sum."""
    counts: dict[str, int] = {}
    for e in examples:
        counts[e.kind] = counts.get(e.kind, 0) + 1
    total = len(examples)

    def share(*kinds: str) -> float:
        return sum(counts.get(k, 0) for k in kinds) / total if total else 0.0

    return {
        "counts": dict(sorted(counts.items())),
        "shares": {
            "identical": share("identical"),
            "unrelated": share("unrelated", "unrelated-swapped"),
            "swapped": share("rated-swapped"),
            "augmented": share("identical", "unrelated", "unrelated-swapped", "rated-swapped"),
        },
    }


def heldout_examples(items: pd.DataFrame) -> list[Example]:
    """The held-out items as the battery scores them: (source, output), no augmentation."""
    return rated_examples(items, swap=False)
