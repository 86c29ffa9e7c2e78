"""From human ratings to a bi-encoder's cosine targets: a rating mapping table, or linear.

A Sentence-BERT bi-encoder learns to make the cosine of two texts equal a number in 0–1.
The item's human score (the mean of its ratings, on the dimension's own scale) becomes that
number either linearly — the dimension's minimum is 0, its maximum 1 — or through a table
that says which score means how much similarity: the Opusparcus study mapped its 1–4 scale
(half steps: means of two raters) with `4=0.85,3.5=0.70,3=0.50,2.5=0.30,2=0.20,1.5=0.10,1=0.05`.
By default a table is exact: a score it does not list stops the training with the item it
came from, because guessing a value between two rows would silently change what the model
learns. A study whose scores are continuous (CSMD's means on 0–100) cannot list them all, so
a table may instead be read piecewise-linearly (`--label-between linear`): a score between
two listed scores gets the target on the straight line between theirs. A score outside the
listed range is an error either way — the table says nothing about it, so nothing is
extrapolated.
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
from meaningbench.training.request import BETWEEN_EXACT, BETWEEN_LINEAR

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


def describe_between(between: str) -> str:
    """How a table reads the scores, in words for cards, summaries and the dialog."""
    if between == BETWEEN_LINEAR:
        return "linear between the listed ratings, none beyond them"
    return "exact: only the listed ratings"


def check_label_map(label_map: Iterable[Sequence[float]], low: float, high: float) -> None:
    """Every score of the map must lie on the dimension's scale."""
    for score, _target in label_map:
        if not low - TOLERANCE <= score <= high + TOLERANCE:
            raise UserError(
                f"label map: the score {score:g} is outside the dimension's scale {low:g}–{high:g}"
            )


def map_targets(
    targets: TargetTable,
    label_map: LabelMap | None,
    *,
    low: float,
    high: float,
    between: str = BETWEEN_EXACT,
) -> TargetTable:
    """The table's 0–100 targets as cosine targets × 100: linearly (already so: the scale's
    minimum is 0 and its maximum 100), or each item's mean score looked up in the map —
    exactly, or with `between="linear"` interpolated between the two nearest listed scores."""
    if label_map is None:
        return targets
    check_label_map(label_map, low, high)
    frame = targets.frame
    span = high - low
    scores = low + frame["target"].to_numpy(dtype=np.float64) / 100.0 * span
    mapped = np.empty(len(scores))
    for row, score in enumerate(scores):
        target = map_score(score, label_map, between=between, tolerance=TOLERANCE * max(1.0, span))
        if target is None:
            raise UserError(_unmapped_message(frame.iloc[row], score, label_map, between))
        mapped[row] = target * 100.0
    new_frame = frame.assign(target=mapped)
    return replace(targets, frame=new_frame)


def map_score(
    score: float, label_map: LabelMap, *, between: str = BETWEEN_EXACT, tolerance: float = TOLERANCE
) -> float | None:
    """The cosine target of one score, or None where the map does not say: a score it does
    not list (exact), or one outside its listed range (linear between)."""
    rows = sorted(label_map)
    keys = np.array([s for s, _ in rows])
    values = np.array([t for _, t in rows])
    hit = np.flatnonzero(np.abs(keys - score) <= tolerance)
    if len(hit):
        return float(values[hit[0]])
    if between != BETWEEN_LINEAR or not keys[0] < score < keys[-1]:
        return None
    return float(np.interp(score, keys, values))


def _unmapped_message(row: Any, score: float, label_map: LabelMap, between: str) -> str:
    get = row.__getitem__
    n = int(get("n_ratings"))
    origin = "its rating" if n == 1 else f"the mean of its {n} ratings"
    source = str(get("source"))
    if len(source) > 60:
        source = source[:57] + "…"
    item = f"item {int(get('item_id'))} of dataset {get('dataset')!r} (source {source!r})"
    if between == BETWEEN_LINEAR:
        keys = [s for s, _ in label_map]
        return (
            f"the label {score:g} is outside the label map's range {min(keys):g}–{max(keys):g} "
            f"(it is read linearly between its scores, never beyond them): it is {origin} of "
            f"{item}; add a row for the end of the scale, or rescale linearly "
            "(--label-map linear)"
        )
    listed = ", ".join(f"{s:g}" for s, _ in label_map)
    return (
        f"the label {score:g} is not in the label map (it maps {listed}): it is {origin} of "
        f"{item}; add it to the map, read the map linearly between its scores "
        "(--label-between linear), or rescale linearly (--label-map linear)"
    )
