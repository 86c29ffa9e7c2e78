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

The human ceiling: a metric's correlation with the human item score cannot exceed the
square root of that score's reliability (the correlation of a perfect predictor with a
criterion measured with noise is attenuated by √reliability). The reliability used is the
Spearman–Brown split-half value (the reliability of the mean of an item's raters); when
no split is possible, ICC(·,k).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.orm import Session

from app.analysis.data import load_study_data
from app.analysis.stats import pearson_columns
from db.study import Study


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


def icc_one_way(items: np.ndarray, values: np.ndarray) -> dict[str, float]:
    """One-way random ICC(1,1) and ICC(1,k0) for unequal numbers of ratings per item."""
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
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "ICC(1,1)": float((msb - msw) / (msb + (k0 - 1) * msw)),
            "ICC(1,k)": float((msb - msw) / msb),
            "k0": float(k0),
        }


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


@dataclass
class AgreementResult:
    n_annotators: int
    n_ratings: int
    n_items_multi: int  # items with two ratings or more: what agreement is computed on
    alpha: float
    icc_model: str  # the headline ICC: "ICC(2,1)" (complete design) or "ICC(1,1)"
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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def annotators_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame.from_dict(self.loo, orient="index", columns=["r", "n"])
        frame.index.name = "annotator"
        return frame

    def to_frame(self) -> pd.DataFrame:
        return self.summary_frame()

    def summary_frame(self) -> pd.DataFrame:
        rows = {
            "annotators": self.n_annotators,
            "ratings": self.n_ratings,
            "items rated twice or more": self.n_items_multi,
            "Krippendorff's alpha (interval)": self.alpha,
            self.icc_model: self.icc,
            self.icc_model.replace(",1)", ",k)"): self.icc_k,
            "split-half r": self.split_half_r,
            "Spearman-Brown": self.spearman_brown,
            "annotator vs leave-one-out mean (mean r)": self.loo_mean,
            "human ceiling (max r)": self.ceiling,
        }
        frame = pd.DataFrame({"value": rows})
        frame.index.name = "statistic"
        return frame


def agreement(
    items: np.ndarray,
    raters: np.ndarray,
    values: np.ndarray,
    *,
    rater_names: list[str] | None = None,
    n_splits: int = 50,
    seed: int = 0,
) -> AgreementResult:
    items = np.asarray(items)
    raters = np.asarray(raters, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    _, unit = np.unique(items, return_inverse=True)
    m = np.bincount(unit) if unit.size else np.zeros(0, dtype=np.int64)
    multi = m >= 2
    present = np.unique(raters)
    alpha = krippendorff_alpha_interval(items, values)

    # Complete design: every multiply-rated item carries a rating by every rater present.
    icc_all: dict[str, float] = {}
    model, single, average = "ICC(1,1)", float("nan"), float("nan")
    multi_rows = multi[unit] if unit.size else np.zeros(0, bool)
    raters_multi = np.unique(raters[multi_rows])
    if multi.sum() >= 2 and raters_multi.size >= 2 and (m[multi] == raters_multi.size).all():
        col = np.searchsorted(raters_multi, raters[multi_rows])
        _, row = np.unique(unit[multi_rows], return_inverse=True)
        matrix = np.full((int(row.max()) + 1, raters_multi.size), np.nan)
        matrix[row, col] = values[multi_rows]
        icc_all = icc_two_way(matrix)
        model, single, average = "ICC(2,1)", icc_all["ICC(2,1)"], icc_all["ICC(2,k)"]
    else:
        icc_all = icc_one_way(items, values)
        single = icc_all.get("ICC(1,1)", float("nan"))
        average = icc_all.get("ICC(1,k)", float("nan"))

    r_half, sb = split_half(
        items,
        values,
        raters=raters if model == "ICC(2,1)" else None,
        n_splits=n_splits,
        seed=seed,
    )
    loo_r, loo_n = leave_one_out(items, raters, values)
    names = rater_names or [str(a) for a in range(int(raters.max()) + 1 if raters.size else 0)]
    loo = {names[a]: {"r": float(loo_r[a]), "n": int(loo_n[a])} for a in present}
    finite = [d["r"] for d in loo.values() if np.isfinite(d["r"])]
    if np.isfinite(sb):
        reliability, basis = sb, "split-half (Spearman-Brown)"
    elif np.isfinite(average):
        reliability, basis = average, model.replace(",1)", ",k)")
    else:
        reliability, basis = float("nan"), ""
    ceiling = (
        float(np.sqrt(reliability))
        if np.isfinite(reliability) and reliability > 0
        else (0.0 if np.isfinite(reliability) else float("nan"))
    )
    return AgreementResult(
        n_annotators=int(present.size),
        n_ratings=int(values.size),
        n_items_multi=int(multi.sum()),
        alpha=alpha,
        icc_model=model,
        icc=single,
        icc_k=average,
        icc_all=icc_all,
        split_half_r=r_half,
        spearman_brown=sb,
        loo=loo,
        loo_mean=float(np.mean(finite)) if finite else float("nan"),
        reliability=reliability,
        reliability_basis=basis,
        ceiling=ceiling,
    )


def study_agreement(
    study_or_session: Study | Session,
    dimension: str = "meaning",
    *,
    n_splits: int = 50,
    seed: int = 0,
) -> AgreementResult:
    """Agreement of the study's human annotators (aggregate labels are not raters)."""
    data = load_study_data(study_or_session, dimension)
    items, raters, values = data.ratings.arrays(human_only=True)
    return agreement(
        items, raters, values, rater_names=data.ratings.annotators, n_splits=n_splits, seed=seed
    )
