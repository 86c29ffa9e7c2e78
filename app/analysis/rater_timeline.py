"""Rater checks over time: each named rater's ratings in the order they gave them, cut into
stretches of consecutive items, with the checks of `meaningbench raters` per stretch, so that
a careless stretch (a tired afternoon, a rater who speeds up near the end) shows instead of
being averaged away over the whole queue.

A stretch is `STRETCH` consecutive ratings of the rater on the dimension (hidden controls
included, as the rater met them), ordered by submission time; the last one holds what is
left. Per stretch:
- **controls passed**: of the identical and unrelated controls rated in it, the share that
  pass (`rater_checks.control_verdicts`, the rule of `meaningbench raters`);
- **seconds per item**: the median time each item was on screen (`qc.durations_ms`, the
  figure `meaningbench raters` gives for the whole queue);
- **r with the others**: Pearson r of the stretch's regular items with the mean of the other
  named raters of the same items (`agreement.leave_one_out`, all of the others' ratings);
- **one value**: the share of the stretch's ratings on its most frequent value.

A figure that cannot be computed in a stretch (no control in it, fewer than 3 items shared
with others, no time recorded, every rating one value) has no value and says why. Each
stretch is tested against the study's rater thresholds, with the wording of
`meaningbench raters`. Practice answers (their own tables) are counted per rater beside
the stretches: they come before the queue.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from meaningbench.analysis.agreement import leave_one_out
from meaningbench.analysis.data import dimension_info, study_session
from meaningbench.analysis.qc import durations_ms, name_order
from meaningbench.analysis.rater_checks import (
    RaterThresholds,
    agreement_warning,
    control_verdicts,
    pass_rate_warning,
    same_share_warning,
    speed_warning,
)
from meaningbench.db.frames import ratings_frame
from meaningbench.db.study import Study

STRETCH = 20  # ratings per stretch: about a quarter of an hour of a careful rater's work
MIN_SHARED = 3  # items shared with the others for an r (`leave_one_out`'s rule)


@dataclass(frozen=True)
class Figure:
    """One check of one stretch: a value, or why there is none."""

    value: float | None
    n: int  # what it stands on: controls judged, items timed, items shared, ratings
    why_not: str = ""


@dataclass(frozen=True)
class Stretch:
    number: int  # 1-based, in the rater's order
    first: int  # the position of its first rating in the rater's sequence, 1-based
    last: int
    started: str  # ISO time of its first and last submissions ("" when unknown)
    ended: str
    controls: Figure  # share passed
    controls_passed: int
    seconds: Figure  # median seconds per item
    agreement: Figure  # leave-one-out r
    same_share: Figure  # share of ratings on one value
    warnings: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.warnings)


@dataclass(frozen=True)
class RaterTimeline:
    rater: str
    n_ratings: int
    whole: Stretch  # the whole sequence as one stretch: the same figures over everything
    stretches: tuple[Stretch, ...]
    practice_answered: int = 0
    practice_passed: int = 0

    @property
    def flagged(self) -> tuple[Stretch, ...]:
        return tuple(s for s in self.stretches if s.flagged)


@dataclass(frozen=True)
class Timeline:
    dimension: str
    stretch: int  # ratings per stretch
    raters: tuple[RaterTimeline, ...]

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for rater, data in zip(self.raters, out["raters"], strict=True):
            data["flagged"] = [s.number for s in rater.flagged]
        return out


def _figure(value: float, n: int, why_not: str) -> Figure:
    return Figure(float(value), n) if np.isfinite(value) else Figure(None, n, why_not)


def _agreement(rows: pd.DataFrame, others: pd.DataFrame) -> Figure:
    """r of the stretch's regular items (the rater's mean per item) with the mean of the
    other raters of the same items; `others`: their (item_id, annotator, value) means."""
    own = rows[rows["item_kind"] == "regular"].groupby("item_id")["value"].mean()
    theirs = others[others["item_id"].isin(own.index)]
    shared = int(theirs["item_id"].nunique())
    if shared < MIN_SHARED:
        why = f"{shared} of its items rated by others too (r needs {MIN_SHARED})"
        return Figure(None, shared, why)
    if own.loc[theirs["item_id"].unique()].nunique() < 2:
        return Figure(None, shared, "every shared item rated alike: no r")
    items = np.r_[own.index.to_numpy(), theirs["item_id"].to_numpy()]
    codes = np.r_[np.zeros(own.size, dtype=np.int64), theirs["code"].to_numpy(dtype=np.int64)]
    values = np.r_[own.to_numpy(dtype=np.float64), theirs["value"].to_numpy(dtype=np.float64)]
    r, n = leave_one_out(items, codes, values)
    return _figure(r[0], int(n[0]), "the others rated the shared items alike: no r")


def _stretch(
    number: int, first: int, rows: pd.DataFrame, others: pd.DataFrame, t: RaterThresholds
) -> Stretch:
    judged, passed = control_verdicts(rows, t)
    n_controls = int(judged.sum())
    controls = (
        Figure(float(passed[judged].mean()), n_controls)
        if n_controls
        else Figure(None, 0, "no identical or unrelated control in it")
    )
    ms = durations_ms(rows)
    timed = ms[np.isfinite(ms)]
    seconds = (
        Figure(float(np.median(timed)) / 1000.0, int(timed.size))
        if timed.size
        else Figure(None, 0, "no time on screen recorded")
    )
    values = rows["value"]
    same = Figure(float(values.value_counts().iloc[0] / values.size), int(values.size))
    agreement = _agreement(rows, others)
    found = (
        agreement_warning(_num(agreement), t),
        pass_rate_warning("identical and unrelated", _num(controls), t),
        same_share_warning(same.n, _num(same), t),
        speed_warning(_num(seconds), t),
    )
    stamps = pd.to_datetime(rows["submitted_at"], errors="coerce").dropna()
    return Stretch(
        number=number,
        first=first,
        last=first + len(rows) - 1,
        started=stamps.min().isoformat() if not stamps.empty else "",
        ended=stamps.max().isoformat() if not stamps.empty else "",
        controls=controls,
        controls_passed=int(passed[judged].sum()),
        seconds=seconds,
        agreement=agreement,
        same_share=same,
        warnings=tuple(w for w in found if w is not None),
    )


def _num(f: Figure) -> float:
    return f.value if f.value is not None else float("nan")


def rater_timeline(
    name: str, frame: pd.DataFrame, t: RaterThresholds, stretch: int = STRETCH
) -> RaterTimeline:
    """One rater's stretches; `frame`: the named raters' current ratings of one dimension."""
    if stretch < 1:
        raise ValueError("a stretch holds at least one rating")
    mine = frame[frame["annotator"] == name].copy()
    mine["_at"] = pd.to_datetime(mine["submitted_at"], errors="coerce")
    mine = mine.sort_values(["_at", "rating_id"], kind="stable", na_position="first")
    regular = frame[(frame["item_kind"] == "regular") & (frame["annotator"] != name)]
    others = regular.groupby(["item_id", "annotator"], sort=True)["value"].mean().reset_index()
    # Codes from 1: 0 is the rater whose stretch it is.
    others["code"] = others["annotator"].astype("category").cat.codes.to_numpy() + 1
    stretches = tuple(
        _stretch(k + 1, start + 1, mine.iloc[start : start + stretch], others, t)
        for k, start in enumerate(range(0, len(mine), stretch))
    )
    return RaterTimeline(name, len(mine), _stretch(0, 1, mine, others, t), stretches)


def timeline_from_frame(
    frame: pd.DataFrame,
    thresholds: RaterThresholds,
    stretch: int = STRETCH,
    practice: dict[str, tuple[int, int]] | None = None,
    dimension: str = "meaning",
) -> Timeline:
    """Every named rater's stretches; `practice`: rater → (answered, passed)."""
    named = frame[frame["annotator_kind"] == "named"]
    names = sorted({str(n) for n in named["annotator"]}, key=name_order)
    raters = []
    for name in names:
        line = rater_timeline(name, named, thresholds, stretch)
        answered, passed = (practice or {}).get(name, (0, 0))
        raters.append(
            RaterTimeline(line.rater, line.n_ratings, line.whole, line.stretches, answered, passed)
        )
    return Timeline(dimension, stretch, tuple(raters))


def study_timeline(study: Study, dimension: str = "meaning", stretch: int = STRETCH) -> Timeline:
    """The study's raters over time, against the study's thresholds."""
    from meaningbench.annotation.practice import practice_results
    from meaningbench.annotation.settings import load_settings

    with study_session(study) as session:
        dimension_info(session, dimension)  # a clear error for an unknown dimension
        thresholds = RaterThresholds.from_json(load_settings(session).rater_thresholds)
        frame = ratings_frame(session, dimension=dimension, annotator_kinds=("named",))
    practice = {p.rater: (p.answered, p.passed) for p in practice_results(study)}
    return timeline_from_frame(frame, thresholds, stretch, practice, dimension)
