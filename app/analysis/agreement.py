"""Inter-annotator agreement on one dimension, and the human ceiling it implies.

Input is long: one (item, annotator, value) per current human rating of a regular item.
Everything is O(number of ratings) in numpy, so the dashboard can refresh it live:
- Krippendorff's alpha, interval level, in closed form (the `krippendorff` package is the
  oracle: same numbers, same alpha);
- ICC. When every multiply-rated item was rated by every annotator (a complete design)
  the headline is ICC(2,1) / ICC(2,k): two-way random effects, absolute agreement. When
  the design is incomplete (k of many annotators per item, as in crowd studies) raters are
  nested in items and the headline is the one-way ICC(1,1) / ICC(1,k), with k the
  effective number of ratings per item k0 = (N − Σk_i²/N) / (n − 1);
- split-half reliability: each item's ratings are split in two halves, the half means are
  correlated across items (Pearson), Spearman–Brown steps that up to the full number of
  raters (2r / (1 + r)); averaged over random splits;
- each annotator against the leave-one-out mean of the others on the same items.

Anonymous ratings (a file's single ratings without rater ids) carry no rater identity.
Estimators that need none are computed on them: alpha (its reliability data is items ×
rating slots, and slots need not be raters), the one-way ICC(1) (raters nested in items
is exactly "an unknown person per rating") with its F-based interval, and split-half with
random halves within each item. Estimators that need identity are not shown, and the
result says why: ICC(2,·)/ICC(3,·) separate a rater effect, which needs the same rater
across items; leave-one-out per annotator and per-rater QC need to know whose ratings
are whose. Named raters' repeated ratings of an item count as their mean first (the rule
of `meaningbench.analysis.human`), so every unit of the reliability data is one rater.

Intervals: ICC(1) by the F distribution (Shrout & Fleiss 1979; McGraw & Wong 1996, case 1),
with k0 in place of k when items have unequal numbers of ratings (Donner 1986's
approximation): with F = MSB/MSW on (n − 1, N − n) degrees of freedom,
F_L = F / F_{1−a/2}(n − 1, N − n), F_U = F · F_{1−a/2}(N − n, n − 1),
ICC(1,1) ∈ [(F_L − 1)/(F_L + k0 − 1), (F_U − 1)/(F_U + k0 − 1)], ICC(1,k) ∈ [1 − 1/F_L,
1 − 1/F_U]. Alpha and Spearman–Brown by a seeded percentile bootstrap over items (each
resample with one fresh random split for split-half).

The human ceiling: a metric's correlation with the human item score cannot exceed the
square root of that score's reliability (the correlation of a perfect predictor with a
criterion measured with noise is attenuated by √reliability). The reliability used is the
Spearman–Brown split-half value (the reliability of the mean of an item's raters); when
no split is possible, ICC(·,k).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps
from sqlalchemy.orm import Session

from meaningbench.analysis.data import load_study_data
from meaningbench.analysis.human import ANONYMOUS, MACHINE, RaterUnits, RatingSet, rater_units
from meaningbench.analysis.stats import pearson_columns
from meaningbench.db.study import Study

CONFIDENCE = 0.95
N_BOOT = 1000
# Why an estimator is not shown when some ratings have no rater identity.
NEEDS_IDENTITY = {
    "ICC(2,1), ICC(2,k), ICC(3,·)": "separate a rater effect from the item effect, which "
    "needs the same raters across items",
    "annotator vs leave-one-out mean": "needs to know which ratings are one annotator's",
    "per-rater QC (Appraise test, controls, timing)": "tests one annotator's ratings",
    "per-annotator z-scores": "standardise by one annotator's mean and SD",
}


def krippendorff_alpha_interval(items: np.ndarray, values: np.ndarray) -> float:
    """Krippendorff's alpha (interval) of values grouped by item (one per rater per item).

    D_o = (1/n) Σ_u Σ_{i≠j∈u} (v_i − v_j)² / (m_u − 1), D_e = Σ_{i≠j} (v_i − v_j)² / (n(n−1))
    over the n pairable values (units with two values or more); Σ_{i≠j} (v_i − v_j)² is
    2(mΣv² − (Σv)²), so no pair is ever enumerated.
    """
    items = np.asarray(items)
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return float("nan")
    _, unit = np.unique(items, return_inverse=True)
    m = np.bincount(unit)
    pairable = m[unit] >= 2
    unit, v = unit[pairable], values[pairable]
    n = v.size
    if n < 2:
        return float("nan")
    m = np.bincount(unit)
    s1 = np.bincount(unit, weights=v)
    s2 = np.bincount(unit, weights=v * v)
    used = m >= 2
    d_o = (2.0 * (m[used] * s2[used] - s1[used] ** 2) / (m[used] - 1)).sum() / n
    d_e = 2.0 * (n * (v * v).sum() - v.sum() ** 2) / (n * (n - 1.0))
    if d_e <= 0:
        return float("nan")
    return float(1.0 - d_o / d_e)


def icc_two_way(matrix: np.ndarray) -> dict[str, float]:
    """Shrout & Fleiss ICCs of a complete (items × raters) matrix."""
    n, k = matrix.shape
    if n < 2 or k < 2:
        return {}
    grand = matrix.mean()
    ssr = k * ((matrix.mean(axis=1) - grand) ** 2).sum()
    ssc = n * ((matrix.mean(axis=0) - grand) ** 2).sum()
    sse = ((matrix - grand) ** 2).sum() - ssr - ssc
    msr, msc = ssr / (n - 1), ssc / (k - 1)
    mse = sse / ((n - 1) * (k - 1))
    msw = (ssc + sse) / (n * (k - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "ICC(1,1)": float((msr - msw) / (msr + (k - 1) * msw)),
            "ICC(2,1)": float((msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)),
            "ICC(3,1)": float((msr - mse) / (msr + (k - 1) * mse)),
            "ICC(1,k)": float((msr - msw) / msr),
            "ICC(2,k)": float((msr - mse) / (msr + (msc - mse) / n)),
            "ICC(3,k)": float((msr - mse) / msr),
        }


def icc_one_way(
    items: np.ndarray, values: np.ndarray, *, confidence: float = CONFIDENCE
) -> dict[str, float]:
    """One-way random ICC(1,1) and ICC(1,k0) for unequal numbers of ratings per item, with
    their F-based intervals (`ICC(1,1) low`, ...; see the module notes)."""
    _, unit = np.unique(items, return_inverse=True)
    k_i = np.bincount(unit)
    keep = k_i[unit] >= 2
    _, unit = np.unique(unit[keep], return_inverse=True)
    v = np.asarray(values, dtype=np.float64)[keep]
    k_i = np.bincount(unit)
    n, total = k_i.size, v.size
    if n < 2:
        return {}
    means = np.bincount(unit, weights=v) / k_i
    grand = v.mean()
    msb = (k_i * (means - grand) ** 2).sum() / (n - 1)
    msw = ((v - means[unit]) ** 2).sum() / (total - n)
    k0 = (total - (k_i**2).sum() / total) / (n - 1)
    df1, df2 = n - 1, total - n
    with np.errstate(invalid="ignore", divide="ignore"):
        out = {
            "ICC(1,1)": float((msb - msw) / (msb + (k0 - 1) * msw)),
            "ICC(1,k)": float((msb - msw) / msb),
            "k0": float(k0),
        }
        f = msb / msw
        if df2 > 0 and np.isfinite(f) and f > 0:
            tail = 1 - (1 - confidence) / 2
            f_low = f / sps.f.ppf(tail, df1, df2)
            f_high = f * sps.f.ppf(tail, df2, df1)
            out["F"] = float(f)
            out["ICC(1,1) low"] = float((f_low - 1) / (f_low + k0 - 1))
            out["ICC(1,1) high"] = float((f_high - 1) / (f_high + k0 - 1))
            out["ICC(1,k) low"] = float(1 - 1 / f_low)
            out["ICC(1,k) high"] = float(1 - 1 / f_high)
        return out


def split_half(
    items: np.ndarray,
    values: np.ndarray,
    *,
    raters: np.ndarray | None = None,
    n_splits: int = 50,
    seed: int = 0,
) -> tuple[float, float]:
    """Mean split-half Pearson r over random splits, and its Spearman–Brown value.

    With `raters` (use it for a complete design) each split divides the annotators into
    two groups, and a half is an item's mean over one group: a rater's constant bias then
    shifts every item alike and costs no correlation, as it costs a metric none. Without
    (incomplete designs, where raters vary between items and their bias is noise) each
    item's ratings are put in a random cyclic order and cut into ⌊m/2⌋ and ⌈m/2⌉; any
    value-blind split rule has the same expectation for exchangeable raters, and this one
    is O(ratings) per split.
    """
    _, unit = np.unique(items, return_inverse=True)
    m = np.bincount(unit)
    keep = m[unit] >= 2
    _, unit = np.unique(unit[keep], return_inverse=True)
    v = np.asarray(values, dtype=np.float64)[keep]
    rater_codes = None
    if raters is not None:
        present, rater_codes = np.unique(np.asarray(raters)[keep], return_inverse=True)
        if present.size < 2:
            return float("nan"), float("nan")
    n_units = int(unit.max()) + 1 if unit.size else 0
    if n_units < 3:
        return float("nan"), float("nan")
    m = np.bincount(unit)
    order = np.argsort(unit, kind="stable")
    pos = np.empty(v.size, dtype=np.int64)
    starts = np.r_[0, np.cumsum(m)[:-1]]
    pos[order] = np.arange(v.size) - np.repeat(starts, m)
    rng = np.random.default_rng(seed)
    rs = []
    for _ in range(n_splits):
        if rater_codes is not None:
            n_r = int(rater_codes.max()) + 1
            in_first = rng.permutation(n_r) < n_r // 2
            first = in_first[rater_codes]
        else:
            shift = rng.integers(0, m)
            first = (pos - shift[unit]) % m[unit] < m[unit] // 2
        c1 = np.bincount(unit, weights=first, minlength=n_units)
        a = np.bincount(unit, weights=v * first, minlength=n_units) / c1
        b = np.bincount(unit, weights=v * ~first, minlength=n_units) / (m - c1)
        r = pearson_columns(a[:, None], b, np.ones((n_units, 1), dtype=bool))[0]
        if np.isfinite(r):
            rs.append(r)
    if not rs:
        return float("nan"), float("nan")
    r_mean = float(np.mean(rs))
    return r_mean, float(2 * r_mean / (1 + r_mean)) if r_mean > -1 else float("nan")


def _weighted_r(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    sw = w.sum()
    if sw <= 0:
        return float("nan")
    da = a - (w * a).sum() / sw
    db = b - (w * b).sum() / sw
    den = np.sqrt((w * da * da).sum() * (w * db * db).sum())
    return float((w * da * db).sum() / den) if den > 0 else float("nan")


def bootstrap_intervals(
    items: np.ndarray,
    values: np.ndarray,
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals over items for alpha and the split-half
    Spearman–Brown value (random halves within each item, one fresh split per resample).

    A resample is a vector of counts per item, so alpha's sums and the split's half means
    are weighted sums: O(ratings) per resample, no data copied.
    """
    _, unit = np.unique(items, return_inverse=True)
    m = np.bincount(unit) if unit.size else np.zeros(0, np.int64)
    keep = m[unit] >= 2 if unit.size else np.zeros(0, bool)
    _, unit = np.unique(unit[keep], return_inverse=True)
    v = np.asarray(values, dtype=np.float64)[keep]
    n_units = int(unit.max()) + 1 if unit.size else 0
    nan = (float("nan"), float("nan"))
    if n_units < 3 or n_boot < 1:
        return {"alpha": nan, "spearman_brown": nan}
    m = np.bincount(unit)
    s1 = np.bincount(unit, weights=v)
    s2 = np.bincount(unit, weights=v * v)
    d_unit = 2.0 * (m * s2 - s1**2) / (m - 1)
    order = np.argsort(unit, kind="stable")
    pos = np.empty(v.size, dtype=np.int64)
    starts = np.r_[0, np.cumsum(m)[:-1]]
    pos[order] = np.arange(v.size) - np.repeat(starts, m)
    rng = np.random.default_rng(seed)
    alphas, sbs = [], []
    for _ in range(n_boot):
        c = np.bincount(rng.integers(0, n_units, n_units), minlength=n_units).astype(float)
        n = (c * m).sum()
        sv, svv = (c * s1).sum(), (c * s2).sum()
        d_e = 2.0 * (n * svv - sv**2) / (n * (n - 1.0))
        if d_e > 0:
            alphas.append(1.0 - ((c * d_unit).sum() / n) / d_e)
        shift = rng.integers(0, m)
        first = (pos - shift[unit]) % m[unit] < m[unit] // 2
        c1 = np.bincount(unit, weights=first, minlength=n_units)
        a = np.bincount(unit, weights=v * first, minlength=n_units) / c1
        b = np.bincount(unit, weights=v * ~first, minlength=n_units) / (m - c1)
        r = _weighted_r(a, b, c)
        if np.isfinite(r) and r > -1:
            sbs.append(2 * r / (1 + r))
    lo, hi = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2

    def interval(xs: list[float]) -> tuple[float, float]:
        if len(xs) < 2:
            return nan
        q = np.percentile(xs, [lo, hi])
        return float(q[0]), float(q[1])

    return {"alpha": interval(alphas), "spearman_brown": interval(sbs)}


def leave_one_out(
    items: np.ndarray, raters: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per rater code: Pearson r with the mean of the other raters of the same items, and n."""
    _, unit = np.unique(items, return_inverse=True)
    v = np.asarray(values, dtype=np.float64)
    m = np.bincount(unit)
    s = np.bincount(unit, weights=v)
    keep = m[unit] >= 2
    others = np.where(keep, (s[unit] - v) / np.maximum(m[unit] - 1, 1), np.nan)
    n_r = int(raters.max()) + 1 if raters.size else 0
    r_out = np.full(n_r, np.nan)
    n_out = np.bincount(raters[keep], minlength=n_r)
    for a in range(n_r):
        sel = keep & (raters == a)
        if sel.sum() >= 3:
            r_out[a] = pearson_columns(v[sel][:, None], others[sel], np.ones((sel.sum(), 1), bool))[
                0
            ]
    return r_out, n_out


NAN_PAIR = (float("nan"), float("nan"))


@dataclass(frozen=True)
class AgreementResult:
    n_annotators: int  # named annotators
    n_ratings: int  # rater units: one per (item, named rater) plus one per anonymous rating
    n_items_multi: int  # items with two ratings or more: what agreement is computed on
    alpha: float
    icc_model: str  # the headline ICC: "ICC(2,1)" (complete named design) or "ICC(1,1)"
    icc: float
    icc_k: float  # the matching average-measures ICC
    icc_all: dict[str, float] = field(default_factory=dict)
    split_half_r: float = float("nan")
    spearman_brown: float = float("nan")
    loo: dict[str, dict[str, float]] = field(default_factory=dict)
    loo_mean: float = float("nan")
    reliability: float = float("nan")
    reliability_basis: str = ""
    ceiling: float = float("nan")
    n_anonymous: int = 0  # anonymous ratings among the units
    confidence: float = CONFIDENCE
    alpha_ci: tuple[float, float] = NAN_PAIR
    icc_ci: tuple[float, float] = NAN_PAIR
    icc_k_ci: tuple[float, float] = NAN_PAIR
    spearman_brown_ci: tuple[float, float] = NAN_PAIR
    # Estimators left out because some ratings have no rater identity, and why.
    not_shown: dict[str, str] = field(default_factory=dict)
    # Aggregate labels on the dimension: no raters, so no part of agreement.
    n_aggregate: int = 0
    # Per machine rater (`judge --as-rater`), never part of the figures above: alpha with
    # it added to the raters, and the raters' own alpha beside it.
    machine: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def annotators_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame.from_dict(self.loo, orient="index", columns=["r", "n"])
        frame.index.name = "annotator"
        return frame

    def to_frame(self) -> pd.DataFrame:
        return self.summary_frame()

    def summary_frame(self) -> pd.DataFrame:
        def ci(pair: tuple[float, float]) -> str:
            lo, hi = pair
            return f"[{lo:.3f}, {hi:.3f}]" if np.isfinite(lo) and np.isfinite(hi) else ""

        average = self.icc_model.replace(",1)", ",k)")
        rows: dict[str, tuple[Any, str]] = {
            "named annotators": (self.n_annotators, ""),
            "anonymous ratings": (self.n_anonymous, ""),
            "ratings (one per rater and item)": (self.n_ratings, ""),
            "items rated twice or more": (self.n_items_multi, ""),
            "Krippendorff's alpha (interval)": (self.alpha, ci(self.alpha_ci)),
            self.icc_model: (self.icc, ci(self.icc_ci)),
            average: (self.icc_k, ci(self.icc_k_ci)),
            "split-half r": (self.split_half_r, ""),
            "Spearman-Brown": (self.spearman_brown, ci(self.spearman_brown_ci)),
            "annotator vs leave-one-out mean (mean r)": (self.loo_mean, ""),
            "human ceiling (max r)": (self.ceiling, ""),
        }
        if self.not_shown:
            rows.pop("annotator vs leave-one-out mean (mean r)")
        frame = pd.DataFrame(
            {
                # Object dtype: counts print as counts, not as 4941.000.
                "value": pd.Series({k: v for k, (v, _) in rows.items()}, dtype=object),
                f"{int(round(100 * self.confidence))}% CI": {k: c for k, (_, c) in rows.items()},
            }
        )
        frame.index.name = "statistic"
        return frame


def agreement(
    items: np.ndarray,
    raters: np.ndarray,
    values: np.ndarray,
    *,
    rater_names: list[str] | None = None,
    anonymous: np.ndarray | None = None,
    n_splits: int = 50,
    seed: int = 0,
    n_boot: int = 0,
    confidence: float = CONFIDENCE,
) -> AgreementResult:
    """Agreement of per-rater ratings of one dimension (aggregate labels are no raters).

    `anonymous` marks ratings without rater identity (their `raters` code is ignored).
    A named rater's repeated ratings of an item count once, as their mean.
    """
    items = np.asarray(items, dtype=np.int64)
    raters = np.asarray(raters, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    anon = (
        np.zeros(values.size, dtype=bool)
        if anonymous is None
        else np.asarray(anonymous, dtype=bool)
    )
    n_codes = int(raters.max()) + 1 if raters.size else 0
    u = rater_units(items, raters, np.where(anon, ANONYMOUS, 0).astype(np.int8), values, n_codes)
    return _agreement_of_units(
        u,
        rater_names=rater_names,
        n_splits=n_splits,
        seed=seed,
        n_boot=n_boot,
        confidence=confidence,
    )


def agreement_of_units(
    units: RaterUnits,
    *,
    rater_names: list[str] | None = None,
    n_splits: int = 50,
    seed: int = 0,
    n_boot: int = 0,
    confidence: float = CONFIDENCE,
) -> AgreementResult:
    """`agreement` on rater units already made by the rule (`RatingSet.units()`)."""
    return _agreement_of_units(
        units,
        rater_names=rater_names,
        n_splits=n_splits,
        seed=seed,
        n_boot=n_boot,
        confidence=confidence,
    )


@dataclass(frozen=True)
class _IccChoice:
    """The ICC the design allows: two-way on a complete design, one-way otherwise."""

    complete: bool
    icc_all: dict[str, float]
    model: str
    single: float
    average: float
    icc_ci: tuple[float, float]
    icc_k_ci: tuple[float, float]


def _choose_icc(
    items: np.ndarray,
    values: np.ndarray,
    raters: np.ndarray,
    anon: np.ndarray,
    unit: np.ndarray,
    m: np.ndarray,
    confidence: float,
) -> _IccChoice:
    multi = m >= 2
    multi_rows = multi[unit] if unit.size else np.zeros(0, bool)
    raters_multi = np.unique(raters[multi_rows])
    complete = (
        not anon.any()
        and multi.sum() >= 2
        and raters_multi.size >= 2
        and bool((m[multi] == raters_multi.size).all())
    )
    one_way = icc_one_way(items, values, confidence=confidence)
    if complete:
        # Complete design: every multiply-rated item carries a rating by every rater present.
        col = np.searchsorted(raters_multi, raters[multi_rows])
        _, row = np.unique(unit[multi_rows], return_inverse=True)
        matrix = np.full((int(row.max()) + 1, raters_multi.size), np.nan)
        matrix[row, col] = values[multi_rows]
        icc_all = icc_two_way(matrix)
        return _IccChoice(
            True, icc_all, "ICC(2,1)", icc_all["ICC(2,1)"], icc_all["ICC(2,k)"], NAN_PAIR, NAN_PAIR
        )
    return _IccChoice(
        False,
        one_way,
        "ICC(1,1)",
        one_way.get("ICC(1,1)", float("nan")),
        one_way.get("ICC(1,k)", float("nan")),
        (
            one_way.get("ICC(1,1) low", float("nan")),
            one_way.get("ICC(1,1) high", float("nan")),
        ),
        (
            one_way.get("ICC(1,k) low", float("nan")),
            one_way.get("ICC(1,k) high", float("nan")),
        ),
    )


def _leave_one_out_by_name(
    items: np.ndarray,
    raters: np.ndarray,
    values: np.ndarray,
    anon: np.ndarray,
    names: list[str],
    named_present: np.ndarray,
) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """(each named rater's leave-one-out r and n, what is not shown and why)."""
    if anon.any():
        return {}, dict(NEEDS_IDENTITY)
    loo_r, loo_n = leave_one_out(items, raters, values)
    return {names[a]: {"r": float(loo_r[a]), "n": int(loo_n[a])} for a in named_present}, {}


def _reliability(sb: float, average: float, model: str) -> tuple[float, str]:
    """The reliability the ceiling rests on, and its basis."""
    if np.isfinite(sb):
        return sb, "split-half (Spearman-Brown)"
    if np.isfinite(average):
        return average, model.replace(",1)", ",k)")
    return float("nan"), ""


def _ceiling(reliability: float) -> float:
    if np.isfinite(reliability) and reliability > 0:
        return float(np.sqrt(reliability))
    return 0.0 if np.isfinite(reliability) else float("nan")


def _agreement_of_units(
    u: RaterUnits,
    *,
    rater_names: list[str] | None,
    n_splits: int,
    seed: int,
    n_boot: int,
    confidence: float,
) -> AgreementResult:
    items, values = u.items, u.values
    anon = u.kinds == ANONYMOUS
    raters = np.where(anon, -1, u.raters)
    _, unit = np.unique(items, return_inverse=True)
    m = np.bincount(unit) if unit.size else np.zeros(0, dtype=np.int64)
    multi = m >= 2
    named_present = np.unique(raters[~anon])
    alpha = krippendorff_alpha_interval(items, values)
    icc = _choose_icc(items, values, raters, anon, unit, m, confidence)

    r_half, sb = split_half(
        items,
        values,
        raters=raters if icc.complete else None,
        n_splits=n_splits,
        seed=seed,
    )
    boot = bootstrap_intervals(items, values, n_boot=n_boot, seed=seed, confidence=confidence)
    names = rater_names or [str(a) for a in range(int(u.raters.max()) + 1 if u.raters.size else 0)]
    loo, not_shown = _leave_one_out_by_name(items, raters, values, anon, names, named_present)
    finite = [d["r"] for d in loo.values() if np.isfinite(d["r"])]
    reliability, basis = _reliability(sb, icc.average, icc.model)
    return AgreementResult(
        n_annotators=int(named_present.size),
        n_ratings=int(values.size),
        n_items_multi=int(multi.sum()),
        alpha=alpha,
        icc_model=icc.model,
        icc=icc.single,
        icc_k=icc.average,
        icc_all=icc.icc_all,
        split_half_r=r_half,
        spearman_brown=sb,
        loo=loo,
        loo_mean=float(np.mean(finite)) if finite else float("nan"),
        reliability=reliability,
        reliability_basis=basis,
        ceiling=_ceiling(reliability),
        n_anonymous=int(anon.sum()),
        confidence=confidence,
        alpha_ci=boot["alpha"],
        icc_ci=icc.icc_ci,
        icc_k_ci=icc.icc_k_ci,
        spearman_brown_ci=boot["spearman_brown"],
        not_shown=not_shown,
    )


def ratings_agreement(
    ratings: RatingSet,
    *,
    n_splits: int = 50,
    seed: int = 0,
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
) -> AgreementResult:
    """Agreement of the per-rater ratings held in a `RatingSet`."""
    result = agreement_of_units(
        ratings.units(),
        rater_names=ratings.annotators,
        n_splits=n_splits,
        seed=seed,
        n_boot=n_boot,
        confidence=confidence,
    )
    _, raters, _ = ratings.arrays()
    return replace(
        result,
        n_aggregate=int(ratings.annotator_is_aggregate()[raters].sum()) if raters.size else 0,
        machine=machine_agreement(machine_rater_units(ratings), result.alpha),
    )


def machine_rater_units(ratings: RatingSet) -> dict[str, tuple[int, RaterUnits]]:
    """Per machine rater: its code and the human raters' units plus its own."""
    kinds = ratings.annotator_kinds()
    return {
        name: (code, ratings.machine_units(code))
        for code, name in enumerate(ratings.annotators)
        if kinds[code] == MACHINE
    }


def machine_agreement(
    units: dict[str, tuple[int, RaterUnits]], alpha_without: float
) -> dict[str, dict[str, float]]:
    """Per machine rater: alpha with it among the raters, alpha without it (the raters'
    own, `alpha_without`) and the items it rated."""
    out: dict[str, dict[str, float]] = {}
    for name, (code, u) in units.items():
        out[name] = {
            "alpha_with": krippendorff_alpha_interval(u.items, u.values),
            "alpha_without": alpha_without,
            "items": float(np.count_nonzero(u.raters == code)),
        }
    return out


def study_agreement(
    study_or_session: Study | Session,
    dimension: str = "meaning",
    *,
    n_splits: int = 50,
    seed: int = 0,
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
) -> AgreementResult:
    """Agreement of the study's per-rater ratings (aggregate labels are not raters)."""
    data = load_study_data(study_or_session, dimension)
    return ratings_agreement(
        data.ratings, n_splits=n_splits, seed=seed, n_boot=n_boot, confidence=confidence
    )
