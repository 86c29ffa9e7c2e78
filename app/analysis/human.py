"""An item's human score: the one rule, used by every command, page, export and model.

What a rating is depends on its source's kind (`meaningbench.db.models.ANNOTATOR_KINDS`):
- **named**: a rating by a rater with an id (the study's own raters, or a rater column of
  a file);
- **anonymous**: one row of a file without rater ids, one unknown person's rating. Two
  identical rows are two people who agreed; the annotator row only names the source;
- **aggregate**: a label published per item (a dataset's mean), standing for its n raters.

The rule for an item's human score on one dimension:
1. each rater's current ratings of the item are averaged first (a named rater who rated
   an item twice, e.g. through a repeat control or two files, counts once); every
   anonymous rating is a rater of its own;
2. the item's score is the mean over its raters (named and anonymous together), and its
   n is the number of those raters;
3. an item that no rater rated takes the mean of its aggregate labels instead (each
   aggregate source's labels of the item averaged first, then the sources). The study's
   own raters win where they exist because they are the measurement the study controls.

z-scores (`--z`): a named rater's ratings are standardised by that rater's mean and sample
SD (ddof = 1; an SD of 0 or a single rating counts as SD 1) before step 1; an aggregate
source is standardised like one rater. Anonymous ratings have no rater to standardise by,
so they carry no z-score: an item's z is the mean over its named raters, and an item rated
only anonymously has no z-score (it is left out of z-score correlations, which say so).

Rater-quality weights (`correlate --weighted-raters`, weights from
`meaningbench.analysis.rater_checks`) change step 2 only: the mean over raters becomes a
weighted mean, each named rater's unit weighted by the rater's weight (anonymous ratings
weigh 1; an item whose raters all weigh 0 keeps the plain mean).

This module holds the rule once: `combine` on arrays, `RatingSet` (the dashboard's
in-memory ratings, updated one rating at a time) and `item_scores` (a ratings table in,
one row per item out) both go through it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

RatingKind = Literal["named", "anonymous", "aggregate"]
KINDS: tuple[RatingKind, ...] = ("named", "anonymous", "aggregate")
PER_RATER: tuple[RatingKind, ...] = ("named", "anonymous")
_CODE: dict[str, int] = {k: i for i, k in enumerate(KINDS)}
NAMED, ANONYMOUS, AGGREGATE = 0, 1, 2


@dataclass
class HumanScores:
    """Per item (aligned with `item_ids`): score, mean z, raters and ratings behind it."""

    item_ids: np.ndarray
    raw: np.ndarray  # NaN = no score
    z: np.ndarray
    n_raters: np.ndarray  # raters behind the score (per-rater kinds, else aggregate sources)
    n_ratings: np.ndarray  # rating rows behind the score
    from_aggregate: np.ndarray  # bool: the score comes from aggregate labels
    label: np.ndarray  # mean aggregate label (NaN: none), whether or not it is the score
    rater_mean: np.ndarray  # mean over per-rater raters (NaN: none)

    def values(self, z: bool = False) -> np.ndarray:
        return self.z if z else self.raw


def kind_codes(kinds: pd.Series | np.ndarray | list[str]) -> np.ndarray:
    return np.fromiter((_CODE[str(k)] for k in kinds), np.int8, len(kinds))


def zscores(raters: np.ndarray, values: np.ndarray, n_raters: int) -> np.ndarray:
    """Each value standardised by its rater's mean and sample SD (SD 0 or undefined → 1)."""
    if values.size == 0:
        return np.zeros(0)
    count = np.bincount(raters, minlength=n_raters).astype(np.float64)
    mean = np.bincount(raters, weights=values, minlength=n_raters) / np.maximum(count, 1)
    dev = values - mean[raters]
    ss = np.bincount(raters, weights=dev * dev, minlength=n_raters)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(ss / (count - 1))
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    return np.asarray(dev / sd[raters])


@dataclass
class RaterUnits:
    """One entry per (item, rater): the rater's mean rating of the item (rule step 1)."""

    items: np.ndarray  # item positions
    raters: np.ndarray  # rater codes; for anonymous units the code of their source
    kinds: np.ndarray  # kind code per unit
    values: np.ndarray  # the rater's mean raw rating of the item
    z: np.ndarray  # the rater's mean z-score of the item (NaN for anonymous)
    n_ratings: np.ndarray  # ratings averaged into the unit


def rater_units(
    items: np.ndarray,
    raters: np.ndarray,
    kinds: np.ndarray,
    values: np.ndarray,
    n_raters: int,
    *,
    distinct: bool = False,
) -> RaterUnits:
    """Step 1 of the rule: ratings grouped into (item, rater) units and averaged.

    `kinds` is the kind code of each rating. Anonymous ratings become units of their own.
    `distinct=True` promises that no (item, rater) pair repeats, so every rating is its
    own unit and the grouping is skipped (the dashboard's live path).
    """
    items = np.asarray(items, dtype=np.int64)
    raters = np.asarray(raters, dtype=np.int64)
    kinds = np.asarray(kinds, dtype=np.int8)
    values = np.asarray(values, dtype=np.float64)
    z = np.full(values.size, np.nan)
    standardised = kinds != ANONYMOUS
    if standardised.any():
        z[standardised] = zscores(raters[standardised], values[standardised], n_raters)
    if distinct:
        z[~standardised] = np.nan
        return RaterUnits(items, raters, kinds, values, z, np.ones(values.size, np.int64))
    anonymous = kinds == ANONYMOUS
    # Anonymous ratings get codes beyond every real rater code, one each.
    unit_rater = raters.copy()
    unit_rater[anonymous] = n_raters + np.arange(int(anonymous.sum()))
    span = np.int64(max(n_raters + int(anonymous.sum()), 1))
    key = items * span + unit_rater
    # A hash table, not a sort: O(ratings), so a live refresh stays cheap on big studies.
    inverse, keys = pd.factorize(key)
    inverse = np.asarray(inverse, dtype=np.int64)
    keys = np.asarray(keys, dtype=np.int64)
    first = np.empty(keys.size, dtype=np.int64)
    first[inverse[::-1]] = np.arange(inverse.size - 1, -1, -1)
    count = np.bincount(inverse, minlength=keys.size)
    raw = np.bincount(inverse, weights=values, minlength=keys.size) / count
    with np.errstate(invalid="ignore"):
        zmean = np.bincount(inverse, weights=np.nan_to_num(z), minlength=keys.size) / count
    unit_kinds = kinds[first]
    zmean[unit_kinds == ANONYMOUS] = np.nan
    return RaterUnits(
        items=(keys // span).astype(np.int64),
        raters=raters[first],
        kinds=unit_kinds,
        values=raw,
        z=zmean,
        n_ratings=count,
    )


def _means(items: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    count = np.bincount(items, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(items, weights=values, minlength=n) / count, count


def _weighted_means(
    items: np.ndarray, values: np.ndarray, weights: np.ndarray, n: int
) -> np.ndarray:
    total = np.bincount(items, weights=weights, minlength=n)
    plain, _ = _means(items, values, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        weighted = np.bincount(items, weights=weights * values, minlength=n) / total
    return np.where(total > 0, weighted, plain)


def combine(
    items: np.ndarray,
    raters: np.ndarray,
    kinds: np.ndarray,
    values: np.ndarray,
    n_items: int,
    n_raters: int,
    item_ids: np.ndarray | None = None,
    *,
    distinct: bool = False,
    rater_weights: np.ndarray | None = None,
) -> HumanScores:
    """The rule on arrays: ratings (item position, rater code, kind code, value) → scores.

    `distinct`: see `rater_units`. `rater_weights`: a weight per rater code (None: all 1)."""
    u = rater_units(items, raters, kinds, values, n_raters, distinct=distinct)
    per_rater = u.kinds != AGGREGATE
    mean_r, count_r = _means(u.items[per_rater], u.values[per_rater], n_items)
    named = u.kinds == NAMED
    z_r, _ = _means(u.items[named], u.z[named], n_items)
    if rater_weights is not None:
        w = np.ones(u.values.size)
        w[named] = np.clip(np.asarray(rater_weights, dtype=np.float64)[u.raters[named]], 0, None)
        mean_r = _weighted_means(u.items[per_rater], u.values[per_rater], w[per_rater], n_items)
        z_r = _weighted_means(u.items[named], u.z[named], w[named], n_items)
    rows_r = np.bincount(u.items[per_rater], weights=u.n_ratings[per_rater], minlength=n_items)
    agg = ~per_rater
    mean_a, count_a = _means(u.items[agg], u.values[agg], n_items)
    z_a, _ = _means(u.items[agg], u.z[agg], n_items)
    rows_a = np.bincount(u.items[agg], weights=u.n_ratings[agg], minlength=n_items)
    use_r = count_r > 0
    return HumanScores(
        item_ids=np.arange(n_items) if item_ids is None else item_ids,
        raw=np.where(use_r, mean_r, mean_a),
        z=np.where(use_r, z_r, z_a),
        n_raters=np.where(use_r, count_r, count_a).astype(np.int64),
        n_ratings=np.where(use_r, rows_r, rows_a).astype(np.int64),
        from_aggregate=~use_r & (count_a > 0),
        label=mean_a,
        rater_mean=mean_r,
    )


def item_scores(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, dimension) of a ratings table, by the rule.

    `ratings` has item_id, annotator, annotator_kind, value and optionally dimension (rows
    of `meaningbench.db.frames.ratings_frame` or `meaningbench.db.frames.rating_rows`). Columns out: item_id,
    dimension, score, z, n_raters, n_ratings, from_aggregate, rater_mean, label.
    """
    columns = [
        "item_id",
        "dimension",
        "score",
        "z",
        "n_raters",
        "n_ratings",
        "from_aggregate",
        "rater_mean",
        "label",
    ]
    if ratings.empty:
        return pd.DataFrame(columns=columns)
    if "dimension" in ratings.columns:
        dims = ratings["dimension"].astype(str)
    else:
        dims = pd.Series("", index=ratings.index)
    frames = []
    for dim, part in ratings.groupby(dims, sort=False):
        item_ids, items = np.unique(part["item_id"].to_numpy(dtype=np.int64), return_inverse=True)
        _, raters = np.unique(part["annotator"].astype(str).to_numpy(), return_inverse=True)
        s = combine(
            items,
            raters,
            kind_codes(part["annotator_kind"].to_numpy()),
            part["value"].to_numpy(dtype=np.float64),
            item_ids.size,
            int(raters.max()) + 1 if raters.size else 0,
            item_ids=item_ids,
        )
        frames.append(
            pd.DataFrame(
                {
                    "item_id": item_ids,
                    "dimension": dim,
                    "score": s.raw,
                    "z": s.z,
                    "n_raters": s.n_raters,
                    "n_ratings": s.n_ratings,
                    "from_aggregate": s.from_aggregate,
                    "rater_mean": s.rater_mean,
                    "label": s.label,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[columns]


def source_means(ratings: pd.DataFrame) -> pd.DataFrame:
    """Per (item, annotator row): the mean of its ratings, for display beside the score.

    For a named rater this is step 1 of the rule; for an anonymous or aggregate source it is
    the mean of the source's ratings of the item (not a rater: shown, never a rule input).
    Columns: item_id, annotator, annotator_kind, value, n.
    """
    if ratings.empty:
        return pd.DataFrame(columns=["item_id", "annotator", "annotator_kind", "value", "n"])
    grouped = ratings.groupby(["item_id", "annotator", "annotator_kind"], sort=False)["value"]
    return grouped.agg(value="mean", n="size").reset_index()


class RatingSet:
    """Current ratings of one dimension on a fixed list of items, updatable in place.

    Each rating is kept under a key: its rating id when known (ratings read from the
    study), otherwise (item, annotator) — a live submission replaces that rater's
    earlier one. `scores()` applies the rule to whatever is active.
    """

    def __init__(self, item_ids: np.ndarray | list[int]) -> None:
        self.item_ids = np.asarray(item_ids, dtype=np.int64)
        self._pos = {int(i): k for k, i in enumerate(self.item_ids)}
        self._annotators: dict[str, int] = {}
        self._kinds: list[int] = []
        self._key: dict[Hashable, int] = {}
        self._keys: list[Hashable] = []
        cap = 16
        self._item = np.zeros(cap, dtype=np.int64)
        self._rater = np.zeros(cap, dtype=np.int64)
        self._value = np.zeros(cap, dtype=np.float64)
        self._active = np.zeros(cap, dtype=bool)
        self._size = 0
        # True while no (item, rater) pair of a named or aggregate source has two active
        # ratings: then each rating is its own unit and `scores()` skips the grouping.
        # Cleared when a repeat may have appeared; never set back (a safe over-estimate).
        self._distinct = True
        # Rater-quality weights by rater name (None: every rater weighs 1).
        self.rater_weights: dict[str, float] | None = None

    @classmethod
    def from_frame(cls, ratings: pd.DataFrame, item_ids: np.ndarray | list[int]) -> RatingSet:
        """From `meaningbench.db.frames.ratings_frame` rows of one dimension; other items are ignored."""
        rs = cls(item_ids)
        if ratings.empty:
            return rs
        keep = ratings["item_id"].isin(rs._pos)
        frame = ratings.loc[keep]
        pairs = frame[["annotator", "annotator_kind"]].drop_duplicates("annotator")
        for name, kind in pairs.itertuples(index=False):
            rs._annotator_code(str(name), str(kind))
        n = len(frame)
        rs._grow(n)
        items = np.fromiter((rs._pos[int(i)] for i in frame["item_id"]), np.int64, n)
        raters = np.fromiter((rs._annotators[str(a)] for a in frame["annotator"]), np.int64, n)
        start = rs._size
        rs._item[start : start + n] = items
        rs._rater[start : start + n] = raters
        rs._value[start : start + n] = frame["value"].to_numpy(dtype=np.float64)
        rs._active[start : start + n] = True
        if "rating_id" in frame.columns:
            keys: list[Hashable] = [int(r) for r in frame["rating_id"]]
        else:
            keys = [("row", start + k) for k in range(n)]
        for k, key in enumerate(keys):
            rs._key[key] = start + k
        rs._keys.extend(keys)
        rs._size += n
        kinds = rs.annotator_kinds()[raters] if n else np.zeros(0, np.int8)
        pairs = items * np.int64(len(rs._annotators) + 1) + raters
        rs._distinct = not pd.Series(pairs[kinds != ANONYMOUS]).duplicated().any()
        return rs

    def _annotator_code(self, name: str, kind: str) -> int:
        code = self._annotators.get(name)
        if code is None:
            code = len(self._annotators)
            self._annotators[name] = code
            self._kinds.append(_CODE[kind])
        return code

    def _grow(self, extra: int) -> None:
        need = self._size + extra
        if need <= self._item.size:
            return
        cap = max(need, 2 * self._item.size)
        for name in ("_item", "_rater", "_value", "_active"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[: old.size] = old
            setattr(self, name, new)

    @property
    def annotators(self) -> list[str]:
        return list(self._annotators)

    def annotator_kinds(self) -> np.ndarray:
        """Kind code per annotator code."""
        return np.asarray(self._kinds, dtype=np.int8)

    def set(
        self,
        item_id: int,
        annotator: str,
        value: float,
        *,
        kind: RatingKind = "named",
        rating_id: int | None = None,
    ) -> bool:
        """Add or revise one rating; False when the item is not one of this set's items."""
        pos = self._pos.get(int(item_id))
        if pos is None:
            return False
        code = self._annotator_code(annotator, kind)
        key: Hashable = rating_id if rating_id is not None else ("live", pos, code)
        slot = self._key.get(key)
        if self._distinct and self._kinds[code] != ANONYMOUS:
            size = self._size
            same = self._active[:size] & (self._item[:size] == pos) & (self._rater[:size] == code)
            if slot is not None:
                same[slot] = False
            if same.any():
                self._distinct = False
        if slot is None:
            self._grow(1)
            slot = self._size
            self._size += 1
            self._key[key] = slot
            self._keys.append(key)
            self._item[slot], self._rater[slot] = pos, code
        self._value[slot] = float(value)
        self._active[slot] = True
        return True

    def remove(self, item_id: int, annotator: str, *, rating_id: int | None = None) -> bool:
        """Withdraw a rating (an undo): the one with `rating_id`, or else every active rating
        of that annotator on the item. False when there was none."""
        if rating_id is not None:
            return self.discard(rating_id)
        pos = self._pos.get(int(item_id))
        code = self._annotators.get(annotator)
        if pos is None or code is None:
            return False
        size = self._size
        sel = self._active[:size] & (self._item[:size] == pos) & (self._rater[:size] == code)
        self._active[:size][sel] = False
        return bool(sel.any())

    def discard(self, key: Hashable) -> bool:
        """Withdraw the rating kept under `key` (see `active_keys`); False when none is."""
        slot = self._key.get(key)
        if slot is None or not self._active[slot]:
            return False
        self._active[slot] = False
        return True

    def active_keys(self, item_ids: np.ndarray | list[int]) -> dict[Hashable, tuple[int, float]]:
        """Key → (item id, value) of the active ratings of these items."""
        positions = {self._pos[int(i)] for i in item_ids if int(i) in self._pos}
        out: dict[Hashable, tuple[int, float]] = {}
        for slot in np.flatnonzero(self._active[: self._size]):
            pos = int(self._item[slot])
            if pos in positions:
                out[self._keys[slot]] = (int(self.item_ids[pos]), float(self._value[slot]))
        return out

    def arrays(self, *, human_only: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Active ratings as (item positions, annotator codes, values); `human_only` leaves
        out aggregate labels."""
        size = self._size
        sel = self._active[:size].copy()
        if human_only and size:
            sel &= self.annotator_kinds()[self._rater[:size]] != AGGREGATE
        return self._item[:size][sel], self._rater[:size][sel], self._value[:size][sel]

    def annotator_is_aggregate(self) -> np.ndarray:
        return np.asarray(self.annotator_kinds() == AGGREGATE)

    def units(self, *, per_rater_only: bool = True) -> RaterUnits:
        """Step 1 of the rule on the active ratings: one value per (item, rater)."""
        items, raters, values = self.arrays(human_only=per_rater_only)
        kinds = self.annotator_kinds()
        return rater_units(
            items,
            raters,
            kinds[raters] if raters.size else np.zeros(0, np.int8),
            values,
            len(self._annotators),
            distinct=self._distinct,
        )

    def scores(self) -> HumanScores:
        items, raters, values = self.arrays()
        kinds = self.annotator_kinds()
        weights = None
        if self.rater_weights is not None:
            weights = np.ones(len(self._annotators))
            for name, code in self._annotators.items():
                weights[code] = self.rater_weights.get(name, 1.0)
        return combine(
            items,
            raters,
            kinds[raters] if raters.size else np.zeros(0, np.int8),
            values,
            self.item_ids.size,
            len(self._annotators),
            item_ids=self.item_ids,
            distinct=self._distinct,
            rater_weights=weights,
        )
