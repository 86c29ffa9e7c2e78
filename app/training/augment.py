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

How many identical and unrelated pairs: with a sanity share S (the default), each kind makes
up S of the split's examples, drawn cyclically from its distinct texts (all sources first,
then all outputs, each in a seeded order). One pair per source was too few to teach the
sanity checks in two epochs: such a model rated held-out identical pairs 88 on average and
none of them 95 or more. With no share (`None`, the rule of models trained before the share
existed) each distinct source gets one identical and one unrelated pair.

Every text comes from the split's own items, so no held-out sentence reaches training
through the augmentation.
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


def control_count(n_rated: int, share: float, n_kinds: int) -> int:
    """Pairs of one control kind for it to make up `share` of all examples, when `n_kinds`
    control kinds each take that share and `n_rated` rated examples take the rest."""
    if n_kinds == 0 or share <= 0:
        return 0
    total = n_rated / (1.0 - share * n_kinds)
    return round(share * total)


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
    share: float,
    n_rated: int,
    rng: random.Random,
) -> list[Example]:
    """Identical and unrelated pairs that each make up `share` of the split's examples."""
    n = control_count(n_rated, share, int(identical) + int(unrelated))
    anchors = _anchors(items, rng)
    out: list[Example] = []
    if identical:
        out.extend(Example(t, t, IDENTICAL_TARGET, "identical") for t, _ in _cycle(anchors, n))
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
    sanity_share: float | None = None,
) -> list[Example]:
    """All training (or validation) examples of one split part, deterministic in `seed`.

    `sanity_share`: the share of the examples that each of the identical and unrelated
    pairs make up (None: one of each per distinct source)."""
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
            share=sanity_share,
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
