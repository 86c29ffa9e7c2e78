"""Human item scores from current ratings, as raw means or per-annotator z-scores.

The rule for an item's human score on one dimension:
- its **human** raters' current ratings count; the score is their mean (raw), or the mean
  of their z-scores (z);
- an item that no human rated takes the mean of its **aggregate** labels instead (a
  dataset's published mean such as CSMD's `label`, stored under an annotator of kind
  `aggregate`). The study's own raters win where they exist because they are the
  measurement the study controls; aggregates stand in where there is nothing else;
- z-scores are computed per annotator over that annotator's ratings of regular items:
  mean and sample SD (ddof = 1); an SD of 0 or a single rating counts as SD 1. An
  aggregate source is standardised like one annotator.

`RatingSet` keeps the ratings as arrays and can take one new or revised rating without a
database round trip, so a dashboard refresh costs O(number of ratings) in numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass
class HumanScores:
    """Per item (aligned with `item_ids`): raw mean, mean z, how many ratings, which kind."""

    item_ids: np.ndarray
    raw: np.ndarray  # NaN = no score
    z: np.ndarray
    n_ratings: np.ndarray  # ratings behind the score (human, else aggregate)
    from_aggregate: np.ndarray  # bool: the score comes from aggregate labels

    def values(self, z: bool = False) -> np.ndarray:
        return self.z if z else self.raw


class RatingSet:
    """Current ratings of one dimension on a fixed list of items, updatable in place."""

    def __init__(self, item_ids: np.ndarray | list[int]) -> None:
        self.item_ids = np.asarray(item_ids, dtype=np.int64)
        self._pos = {int(i): k for k, i in enumerate(self.item_ids)}
        self._annotators: dict[str, int] = {}
        self._aggregate: list[bool] = []
        self._key: dict[tuple[int, int], int] = {}
        cap = 16
        self._item = np.zeros(cap, dtype=np.int64)
        self._rater = np.zeros(cap, dtype=np.int64)
        self._value = np.zeros(cap, dtype=np.float64)
        self._active = np.zeros(cap, dtype=bool)
        self._size = 0

    @classmethod
    def from_frame(cls, ratings: pd.DataFrame, item_ids: np.ndarray | list[int]) -> RatingSet:
        """From `db.frames.ratings_frame` rows of one dimension; other items are ignored."""
        rs = cls(item_ids)
        if ratings.empty:
            return rs
        keep = ratings["item_id"].isin(rs._pos)
        frame = ratings.loc[keep]
        for name, kind in (
            frame[["annotator", "annotator_kind"]].drop_duplicates("annotator").itertuples(False)
        ):
            rs._annotator_code(str(name), kind == "aggregate")
        n = len(frame)
        rs._grow(n)
        items = np.fromiter((rs._pos[int(i)] for i in frame["item_id"]), np.int64, n)
        raters = np.fromiter((rs._annotators[str(a)] for a in frame["annotator"]), np.int64, n)
        values = frame["value"].to_numpy(dtype=np.float64)
        # Later rows win if a (item, annotator) pair appears twice.
        for k, (i, a) in enumerate(zip(items.tolist(), raters.tolist(), strict=True)):
            slot = rs._key.get((i, a))
            if slot is None:
                slot = rs._size
                rs._size += 1
                rs._key[(i, a)] = slot
                rs._item[slot], rs._rater[slot] = i, a
            rs._value[slot] = values[k]
            rs._active[slot] = True
        return rs

    def _annotator_code(self, name: str, aggregate: bool) -> int:
        code = self._annotators.get(name)
        if code is None:
            code = len(self._annotators)
            self._annotators[name] = code
            self._aggregate.append(aggregate)
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

    def set(self, item_id: int, annotator: str, value: float, *, aggregate: bool = False) -> bool:
        """Add or revise one rating; False when the item is not one of this set's items."""
        pos = self._pos.get(int(item_id))
        if pos is None:
            return False
        code = self._annotator_code(annotator, aggregate)
        slot = self._key.get((pos, code))
        if slot is None:
            self._grow(1)
            slot = self._size
            self._size += 1
            self._key[(pos, code)] = slot
            self._item[slot], self._rater[slot] = pos, code
        self._value[slot] = float(value)
        self._active[slot] = True
        return True

    def remove(self, item_id: int, annotator: str) -> bool:
        """Withdraw a rating (an undo); False when there was none."""
        pos = self._pos.get(int(item_id))
        code = self._annotators.get(annotator)
        if pos is None or code is None:
            return False
        slot = self._key.get((pos, code))
        if slot is None or not self._active[slot]:
            return False
        self._active[slot] = False
        return True

    def arrays(self, *, human_only: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Active ratings as (item positions, annotator codes, values)."""
        size = self._size
        sel = self._active[:size].copy()
        if human_only and size:
            sel &= ~self.annotator_is_aggregate()[self._rater[:size]]
        return self._item[:size][sel], self._rater[:size][sel], self._value[:size][sel]

    def annotator_is_aggregate(self) -> np.ndarray:
        return np.asarray(self._aggregate, dtype=bool)

    def scores(self) -> HumanScores:
        n = self.item_ids.size
        items, raters, values = self.arrays()
        n_ann = len(self._annotators)
        z = zscores(raters, values, n_ann)
        agg = self.annotator_is_aggregate()
        is_agg = agg[raters] if raters.size else np.zeros(0, dtype=bool)
        raw_h, z_h, c_h = _item_means(items[~is_agg], values[~is_agg], z[~is_agg], n)
        raw_a, z_a, c_a = _item_means(items[is_agg], values[is_agg], z[is_agg], n)
        use_h = c_h > 0
        return HumanScores(
            item_ids=self.item_ids,
            raw=np.where(use_h, raw_h, raw_a),
            z=np.where(use_h, z_h, z_a),
            n_ratings=np.where(use_h, c_h, c_a),
            from_aggregate=~use_h & (c_a > 0),
        )


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
    return dev / sd[raters]


def _item_means(
    items: np.ndarray, raw: np.ndarray, z: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    count = np.bincount(items, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw_mean = np.bincount(items, weights=raw, minlength=n) / count
        z_mean = np.bincount(items, weights=z, minlength=n) / count
    return raw_mean, z_mean, count
