"""Rater quality control from hidden control items (Appraise's DA method).

Per named annotator, on one dimension (anonymous ratings have no rater to check):
- **Appraise's reliability test**: the annotator's scores are z-standardised (their mean
  and sample SD over every rating they gave on the dimension, controls included, as
  Appraise does over a rater's scores; SD 0 → 1); each degraded control is paired with its
  original (`Item.parent_id`) when the annotator rated both; a one-sided Mann–Whitney U
  test asks whether degraded scores are lower than original ones. p < 0.05 passes.
  z-standardisation is monotone per annotator, so it changes no rank: it is kept because
  it is what Appraise reports and what mixes raters on one scale in the tables.
- mean ratings of identical controls (a reliable rater rates them high) and of unrelated
  controls (low);
- repeat consistency: mean absolute difference between a repeat control's rating and the
  annotator's rating of its parent;
- median time per item (duration_ms, else submitted_at − shown_at) and the share of very
  fast ratings (under `fast_ms`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from sqlalchemy.orm import Session

from meaningbench.analysis.data import dimension_info, study_session
from meaningbench.db.frames import ratings_frame
from meaningbench.db.study import Study

P_THRESHOLD = 0.05
FAST_MS = 2000


def zscore(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values
    sd = values.std(ddof=1) if values.size > 1 else 0.0
    return np.asarray((values - values.mean()) / (sd if np.isfinite(sd) and sd > 0 else 1.0))


def appraise_test(degraded: np.ndarray, original: np.ndarray) -> float:
    """One-sided Mann–Whitney U p-value for "degraded scores are lower than originals"."""
    degraded = np.asarray(degraded, dtype=np.float64)
    original = np.asarray(original, dtype=np.float64)
    if degraded.size == 0 or original.size == 0:
        return float("nan")
    if np.ptp(np.r_[degraded, original]) == 0:
        return 1.0  # all scores equal: no evidence that degraded ones are lower
    return float(stats.mannwhitneyu(degraded, original, alternative="less").pvalue)


@dataclass
class RaterQC:
    annotator: str
    n_ratings: int
    n_regular: int
    degraded_pairs: int
    appraise_p: float
    passed: bool | None  # None: no degraded pair rated, the test cannot run
    identical_n: int
    identical_mean: float
    unrelated_n: int
    unrelated_mean: float
    repeat_n: int
    repeat_mad: float
    median_ms: float
    fast_share: float

    @property
    def status(self) -> str:
        return "n/a" if self.passed is None else ("pass" if self.passed else "fail")


@dataclass(frozen=True)
class QCResult:
    dimension: str
    raters: dict[str, RaterQC] = field(default_factory=dict)
    fast_ms: int = FAST_MS
    p_threshold: float = P_THRESHOLD

    def to_json(self) -> dict[str, Any]:
        out = {}
        for name, r in self.raters.items():
            d = asdict(r)
            d.pop("annotator")
            d["status"] = r.status
            out[name] = d
        return {
            "dimension": self.dimension,
            "fast_ms": self.fast_ms,
            "p_threshold": self.p_threshold,
            "annotators": out,
        }

    def to_frame(self) -> pd.DataFrame:
        rows = [{**asdict(r), "status": r.status} for r in self.raters.values()]
        columns = [*RaterQC.__dataclass_fields__, "status"]
        return pd.DataFrame(rows, columns=columns).set_index("annotator")


def name_order(name: object) -> tuple[tuple[int, int | str], ...]:
    """Annotators in the order a reader expects: the numbers in a name by value (rater 2
    before rater 10), the rest by its letters."""
    parts = re.split(r"(\d+)", str(name).casefold())
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p)


def durations_ms(frame: pd.DataFrame) -> np.ndarray:
    """Milliseconds per rating row: its duration_ms, else submitted_at − shown_at; NaN
    where neither is known."""
    ms = pd.to_numeric(frame["duration_ms"], errors="coerce").to_numpy(dtype=np.float64)
    missing = ~np.isfinite(ms)
    if missing.any():
        shown = pd.to_datetime(frame["shown_at"], errors="coerce")
        submitted = pd.to_datetime(frame["submitted_at"], errors="coerce")
        spent = (submitted - shown).dt.total_seconds().to_numpy(dtype=np.float64) * 1000.0
        ms = np.where(missing, spent, ms)
    return np.asarray(ms)


def rater_qc(
    name: str,
    frame: pd.DataFrame,
    *,
    fast_ms: int = FAST_MS,
    p_threshold: float = P_THRESHOLD,
) -> RaterQC:
    """QC of one annotator from their current ratings (rows of `meaningbench.db.frames.ratings_frame`)."""
    values = frame["value"].to_numpy(dtype=np.float64)
    # The rule of `meaningbench.analysis.human`: a rater's repeated ratings of an item count as
    # their mean, so a control is paired with one value of its parent.
    z = pd.Series(zscore(values), index=frame["item_id"].to_numpy()).groupby(level=0).mean()
    raw = pd.Series(values, index=frame["item_id"].to_numpy()).groupby(level=0).mean()
    kinds = frame["item_kind"].to_numpy()
    parents = frame["parent_id"].to_numpy()
    items = frame["item_id"].to_numpy()

    def paired(kind: str, series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        sel = (kinds == kind) & pd.notna(parents)
        ctrl, first = np.unique(items[sel], return_index=True)
        par = parents[sel][first].astype(np.int64)
        has = np.isin(par, series.index)
        return series.loc[ctrl[has]].to_numpy(), series.loc[par[has]].to_numpy()

    deg, orig = paired("control-degraded", z)
    p = appraise_test(deg, orig)
    rep, rep_parent = paired("control-repeat", raw)
    ident = values[kinds == "control-identical"]
    unrel = values[kinds == "control-unrelated"]
    ms = durations_ms(frame)
    finite_ms = ms[np.isfinite(ms)]
    return RaterQC(
        annotator=name,
        n_ratings=int(values.size),
        n_regular=int((kinds == "regular").sum()),
        degraded_pairs=int(deg.size),
        appraise_p=p,
        passed=None if not np.isfinite(p) else bool(p < p_threshold),
        identical_n=int(ident.size),
        identical_mean=float(ident.mean()) if ident.size else float("nan"),
        unrelated_n=int(unrel.size),
        unrelated_mean=float(unrel.mean()) if unrel.size else float("nan"),
        repeat_n=int(rep.size),
        repeat_mad=float(np.abs(rep - rep_parent).mean()) if rep.size else float("nan"),
        median_ms=float(np.median(finite_ms)) if finite_ms.size else float("nan"),
        fast_share=float((finite_ms < fast_ms).mean()) if finite_ms.size else float("nan"),
    )


def qc_from_frame(
    ratings: pd.DataFrame,
    *,
    dimension: str = "meaning",
    fast_ms: int = FAST_MS,
    p_threshold: float = P_THRESHOLD,
) -> QCResult:
    """QC of every named annotator in a ratings frame of one dimension (all item kinds).

    Per-rater QC needs rater identity: anonymous ratings (a file without rater ids) have
    no rater to test, and aggregate labels are no rater at all.
    """
    result = QCResult(dimension=dimension, fast_ms=fast_ms, p_threshold=p_threshold)
    if ratings.empty:
        return result
    human = ratings[ratings["annotator_kind"] == "named"]
    groups = dict(list(human.groupby("annotator", sort=False)))
    for name in sorted(groups, key=name_order):
        frame = groups[name]
        result.raters[str(name)] = rater_qc(
            str(name), frame, fast_ms=fast_ms, p_threshold=p_threshold
        )
    return result


def study_qc(
    study_or_session: Study | Session,
    dimension: str = "meaning",
    *,
    fast_ms: int = FAST_MS,
    p_threshold: float = P_THRESHOLD,
) -> QCResult:
    with study_session(study_or_session) as session:
        dimension_info(session, dimension)  # a clear error for an unknown dimension
        ratings = ratings_frame(session, dimension=dimension, annotator_kinds=("named",))
    return qc_from_frame(ratings, dimension=dimension, fast_ms=fast_ms, p_threshold=p_threshold)
