"""From human ratings to a bi-encoder's cosine targets: a rating mapping table, or linear.

A Sentence-BERT bi-encoder learns to make the cosine of two texts equal a number in 0–1.
The item's human score (the mean of its ratings, on the dimension's own scale) becomes that
number either linearly — the dimension's minimum is 0, its maximum 1 — or through a table
that says which score means how much similarity: the Opusparcus study mapped its 1–4 scale
(half steps: means of two raters) with `4=0.85,3.5=0.70,3=0.50,2.5=0.30,2=0.20,1.5=0.10,1=0.05`.
A table is exact: a score it does not list stops the training with the item it came from,
because guessing a value between two rows would silently change what the model learns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from meaningbench.errors import UserError
from meaningbench.training.data import TargetTable

LabelMap = tuple[tuple[float, float], ...]  # (score on the dimension's scale, target in 0–1)
LINEAR = "linear"
OPUSPARCUS = "4=0.85,3.5=0.70,3=0.50,2.5=0.30,2=0.20,1.5=0.10,1=0.05"
# Scores are means of ratings: two raters' 3 and 4 give 3.5 exactly, but 1/3 steps do not
# print exactly, so a score matches a row within this distance.
TOLERANCE = 1e-6


def parse_label_map(text: str | None) -> LabelMap | None:
    """`4=0.85,3.5=0.7,...` → ((4.0, 0.85), (3.5, 0.7), ...) sorted by score; `linear`, an
    empty text or None → None (linear rescaling). UserError names the entry that is wrong."""
    if text is None or not text.strip() or text.strip().lower() == LINEAR:
        return None
    pairs: dict[float, float] = {}
    for entry in (e.strip() for e in re.split(r"[,;\n]", text)):
        if not entry:
            continue
        score_text, sep, target_text = entry.partition("=")
        if not sep:
            raise UserError(
                f"label map entry {entry!r}: write SCORE=TARGET, e.g. 4=0.85 "
                "(or 'linear' to rescale the scale to 0–1)"
            )
        score = _number(score_text, entry, "score")
        target = _number(target_text, entry, "target")
        if not 0.0 <= target <= 1.0:
            raise UserError(
                f"label map entry {entry!r}: the target {target:g} is outside 0–1 "
                "(it is the cosine similarity the model learns for that score)"
            )
        if any(abs(score - s) <= TOLERANCE for s in pairs):
            raise UserError(f"label map entry {entry!r}: the score {score:g} is given twice")
        pairs[score] = target
    if not pairs:
        raise UserError("the label map is empty: give SCORE=TARGET entries, or 'linear'")
    return tuple(sorted(pairs.items(), reverse=True))


def _number(text: str, entry: str, what: str) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise UserError(
            f"label map entry {entry!r}: the {what} {text.strip()!r} is not a number"
        ) from None
    if not math.isfinite(value):
        raise UserError(f"label map entry {entry!r}: the {what} must be a finite number")
    return value


def format_label_map(label_map: LabelMap | None) -> str:
    """The map as `--label-map` takes it (`linear` for none)."""
    if not label_map:
        return LINEAR
    return ",".join(f"{score:g}={target:g}" for score, target in label_map)


def check_label_map(label_map: Iterable[Sequence[float]], low: float, high: float) -> None:
    """Every score of the map must lie on the dimension's scale."""
    for score, _target in label_map:
        if not low - TOLERANCE <= score <= high + TOLERANCE:
            raise UserError(
                f"label map: the score {score:g} is outside the dimension's scale {low:g}–{high:g}"
            )


def map_targets(
    targets: TargetTable, label_map: LabelMap | None, *, low: float, high: float
) -> TargetTable:
    """The table's 0–100 targets as cosine targets × 100: linearly (already so: the scale's
    minimum is 0 and its maximum 100), or each item's mean score looked up in the map."""
    if label_map is None:
        return targets
    check_label_map(label_map, low, high)
    frame = targets.frame
    span = high - low
    scores = low + frame["target"].to_numpy(dtype=np.float64) / 100.0 * span
    keys = np.array([s for s, _ in label_map])
    values = np.array([t for _, t in label_map])
    mapped = np.empty(len(scores))
    for row, score in enumerate(scores):
        hit = np.flatnonzero(np.abs(keys - score) <= TOLERANCE * max(1.0, span))
        if len(hit) == 0:
            raise UserError(_unmapped_message(frame.iloc[row], score, keys))
        mapped[row] = values[hit[0]] * 100.0
    new_frame = frame.assign(target=mapped)
    return replace(targets, frame=new_frame)


def _unmapped_message(row: Any, score: float, keys: np.ndarray) -> str:
    get = row.__getitem__
    n = int(get("n_ratings"))
    origin = "its rating" if n == 1 else f"the mean of its {n} ratings"
    source = str(get("source"))
    if len(source) > 60:
        source = source[:57] + "…"
    listed = ", ".join(f"{k:g}" for k in keys)
    return (
        f"the label {score:g} is not in the label map (it maps {listed}): it is {origin} of "
        f"item {int(get('item_id'))} of dataset {get('dataset')!r} (source {source!r}); "
        "add it to the map, or rescale linearly (--label-map linear)"
    )
