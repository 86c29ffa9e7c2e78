"""Live rater checks: per named rater, how their ratings compare with the others' and with
the hidden controls, with warnings against thresholds the study lead sets per study.

Per rater, on one dimension:
- **agreement**: Pearson r of the rater's item scores with the mean of the other raters of
  the same regular items (leave one rater out; each rater's ratings of an item averaged
  first, the rule of `meaningbench.analysis.human`);
- **QC pass rates**: the share of identical controls rated at least `identical_min` and of
  unrelated controls rated at most `unrelated_max`; repeat consistency (mean absolute
  difference) and Appraise's test, from `meaningbench.analysis.qc`;
- **straight-lining**: the share of the rater's ratings that equal their most frequent value;
- **speed**: median seconds per item.

A machine rater (`meaningbench judge --as-rater`) is checked beside the named raters: its r
is with the mean of all the named raters of the same regular items (it is the one left out),
and its control pass rates are computed as a human's. It never counts among the others of a
human's leave-one-out r, and it has no weight (it is never one of an item's raters).

A rater-quality weight goes with each rater for analyses that weight raters: on a Likert
dimension, the rater's MACE competence (`meaningbench.analysis.mace`); otherwise 1 − p of
Appraise's test where the rater rated degraded pairs, else the leave-one-out r clipped to
[0, 1], else 1 (nothing to judge by).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from meaningbench.analysis.agreement import leave_one_out
from meaningbench.analysis.data import dimension_info, study_session
from meaningbench.analysis.qc import rater_qc
from meaningbench.db.frames import ratings_frame
from meaningbench.db.study import Study


@dataclass
class RaterThresholds:
    """Below (or above) these a rater is warned about; stored per study in its settings."""

    min_agreement: float = 0.3
    identical_min: float = 95.0
    unrelated_max: float = 5.0
    min_qc_pass_rate: float = 0.8
    max_repeat_mad: float = 15.0
    max_same_share: float = 0.5
    min_median_seconds: float = 3.0

    @classmethod
    def from_json(cls, raw: Any) -> RaterThresholds:
        raw = raw if isinstance(raw, dict) else {}
        known = {f.name for f in fields(cls)}
        return cls(**{k: float(v) for k, v in raw.items() if k in known})


@dataclass(frozen=True)
class RaterCheck:
    rater: str
    n_ratings: int
    agreement_r: float  # NaN: fewer than 3 items shared with other raters
    agreement_n: int
    identical_pass: float  # NaN: no identical control rated
    unrelated_pass: float
    repeat_mad: float
    appraise_p: float
    same_share: float
    median_seconds: float
    weight: float
    warnings: list[str] = field(default_factory=list)
    machine: bool = False  # a model's ratings, shown beside the raters

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def agreement_warning(r: float, t: RaterThresholds) -> str | None:
    if np.isfinite(r) and r < t.min_agreement:
        return f"agreement with the others r = {r:.2f} (below {t.min_agreement:g})"
    return None


def pass_rate_warning(label: str, rate: float, t: RaterThresholds) -> str | None:
    if np.isfinite(rate) and rate < t.min_qc_pass_rate:
        return f"{label} controls passed {rate:.0%} (below {t.min_qc_pass_rate:.0%})"
    return None


def same_share_warning(n: int, share: float, t: RaterThresholds) -> str | None:
    if n >= 5 and share > t.max_same_share:
        return f"{share:.0%} of ratings are one value (straight-lining)"
    return None


def speed_warning(seconds: float, t: RaterThresholds) -> str | None:
    if np.isfinite(seconds) and seconds < t.min_median_seconds:
        return f"median {seconds:.1f} s per item (below {t.min_median_seconds:g} s)"
    return None


def _warnings(c: RaterCheck, t: RaterThresholds) -> list[str]:
    # Each threshold's test and wording is one function, which the stretches of
    # `meaningbench.analysis.rater_timeline` share.
    found = [
        agreement_warning(c.agreement_r, t),
        pass_rate_warning("identical", c.identical_pass, t),
        pass_rate_warning("unrelated", c.unrelated_pass, t),
        f"repeats differ by {c.repeat_mad:.1f} on average (above {t.max_repeat_mad:g})"
        if np.isfinite(c.repeat_mad) and c.repeat_mad > t.max_repeat_mad
        else None,
        same_share_warning(c.n_ratings, c.same_share, t),
        speed_warning(c.median_seconds, t),
    ]
    return [w for w in found if w is not None]


def mace_competence(regular: pd.DataFrame, low: float, high: float) -> dict[str, float]:
    """MACE competence of each named rater from their labels of regular items."""
    from meaningbench.analysis.mace import mace

    if regular.empty:
        return {}
    items, item_codes = np.unique(regular["item_id"].to_numpy(), return_inverse=True)
    names, rater_codes = np.unique(regular["annotator"].astype(str).to_numpy(), return_inverse=True)
    labels = np.rint(regular["value"].to_numpy(dtype=np.float64) - low).astype(np.int64)
    result = mace(item_codes, rater_codes, labels, items.size, names.size, int(high - low) + 1)
    return {str(n): float(c) for n, c in zip(names, result.competence, strict=True)}


def checks_from_frame(
    frame: pd.DataFrame, thresholds: RaterThresholds, *, likert: tuple[float, float] | None = None
) -> list[RaterCheck]:
    """Checks of every named rater in a ratings frame of one dimension (all item kinds).

    `likert`: the scale's (low, high) when the dimension is a Likert scale (MACE weights)."""
    named = frame[frame["annotator_kind"] == "named"]
    machines = _machine_checks(frame, named, thresholds)
    if named.empty:
        return machines
    regular = named[named["item_kind"] == "regular"]
    # One value per (item, rater): the human rule's first step.
    per_item = regular.groupby(["item_id", "annotator"], sort=True)["value"].mean().reset_index()
    names = sorted(named["annotator"].unique())
    code = {n: i for i, n in enumerate(names)}
    loo_r, loo_n = (np.full(len(names), np.nan), np.zeros(len(names), dtype=int))
    if not per_item.empty:
        r, n = leave_one_out(
            per_item["item_id"].to_numpy(),
            per_item["annotator"].map(code).to_numpy(dtype=np.int64),
            per_item["value"].to_numpy(dtype=np.float64),
        )
        loo_r[: r.size], loo_n[: n.size] = r, n
    competence = mace_competence(regular, *likert) if likert is not None else {}
    out = []
    for name, rows in named.groupby("annotator", sort=True):
        qc = rater_qc(str(name), rows)
        values = rows["value"].to_numpy(dtype=np.float64)
        identical, unrelated = _control_pass(rows, thresholds)
        same = pd.Series(values).value_counts().iloc[0] / values.size if values.size else 0.0
        i = code[str(name)]
        if str(name) in competence:
            weight = competence[str(name)]
        elif np.isfinite(qc.appraise_p):
            weight = 1.0 - qc.appraise_p
        elif np.isfinite(loo_r[i]):
            weight = float(min(1.0, max(0.0, loo_r[i])))
        else:
            weight = 1.0
        check = RaterCheck(
            rater=str(name),
            n_ratings=int(values.size),
            agreement_r=float(loo_r[i]),
            agreement_n=int(loo_n[i]),
            identical_pass=identical,
            unrelated_pass=unrelated,
            repeat_mad=qc.repeat_mad,
            appraise_p=qc.appraise_p,
            same_share=float(same),
            median_seconds=qc.median_ms / 1000.0,
            weight=weight,
        )
        out.append(replace(check, warnings=_warnings(check, thresholds)))
    return out + machines


CONTROL_KINDS = ("control-identical", "control-unrelated")


def control_verdicts(
    rows: pd.DataFrame, thresholds: RaterThresholds
) -> tuple[np.ndarray, np.ndarray]:
    """(judged, passed) per rating row: the one rule of a control passed. An identical
    control passes rated at least `identical_min`, an unrelated one at most
    `unrelated_max`; other items are not judged one by one (degraded controls go to
    Appraise's test, repeats to their mean difference)."""
    values = rows["value"].to_numpy(dtype=np.float64)
    kinds = rows["item_kind"].to_numpy()
    identical = kinds == CONTROL_KINDS[0]
    unrelated = kinds == CONTROL_KINDS[1]
    passed = (identical & (values >= thresholds.identical_min)) | (
        unrelated & (values <= thresholds.unrelated_max)
    )
    return identical | unrelated, passed


def _control_pass(rows: pd.DataFrame, thresholds: RaterThresholds) -> tuple[float, float]:
    kinds = rows["item_kind"].to_numpy()
    _judged, passed = control_verdicts(rows, thresholds)
    rates = []
    for kind in CONTROL_KINDS:
        sel = kinds == kind
        rates.append(float(passed[sel].mean()) if sel.any() else float("nan"))
    return rates[0], rates[1]


def _machine_checks(
    frame: pd.DataFrame, named: pd.DataFrame, thresholds: RaterThresholds
) -> list[RaterCheck]:
    """Each machine rater against the mean of the named raters (human rule step 1 first)."""
    machines = frame[frame["annotator_kind"] == "machine"]
    regular = named[named["item_kind"] == "regular"]
    units = regular.groupby(["item_id", "annotator"])["value"].mean()
    humans = units.groupby(level="item_id").mean()
    out = []
    for name, rows in machines.groupby("annotator", sort=True):
        own = rows[rows["item_kind"] == "regular"].groupby("item_id")["value"].mean()
        both = pd.concat([own.rename("m"), humans.rename("h")], axis=1, join="inner")
        r = float("nan")
        if len(both) >= 3 and both["m"].std() > 0 and both["h"].std() > 0:
            r = float(np.corrcoef(both["m"], both["h"])[0, 1])
        identical, unrelated = _control_pass(rows, thresholds)
        values = rows["value"]
        check = RaterCheck(
            rater=str(name),
            n_ratings=int(values.size),
            agreement_r=r,
            agreement_n=int(len(both)),
            identical_pass=identical,
            unrelated_pass=unrelated,
            repeat_mad=float("nan"),
            appraise_p=float("nan"),
            same_share=float(values.value_counts().iloc[0] / values.size),
            median_seconds=float("nan"),
            weight=float("nan"),
            machine=True,
        )
        out.append(replace(check, warnings=_warnings(check, thresholds)))
    return out


def study_rater_checks(
    study: Study, dimension: str = "meaning", thresholds: RaterThresholds | None = None
) -> list[RaterCheck]:
    """The checks of a study's named raters, against the study's thresholds unless given."""
    frame, thresholds, likert = _checks_input(study, dimension, thresholds)
    return checks_from_frame(frame, thresholds, likert=likert)


def study_machine_checks(
    study: Study, dimension: str = "meaning", thresholds: RaterThresholds | None = None
) -> list[RaterCheck]:
    """The checks of a study's machine raters only (what `study_rater_checks` gives them),
    without the named raters' own checks."""
    frame, thresholds, _likert = _checks_input(study, dimension, thresholds)
    return _machine_checks(frame, frame[frame["annotator_kind"] == "named"], thresholds)


def _checks_input(
    study: Study, dimension: str, thresholds: RaterThresholds | None
) -> tuple[pd.DataFrame, RaterThresholds, tuple[float, float] | None]:
    from meaningbench.annotation.settings import load_settings

    with study_session(study) as session:
        info = dimension_info(session, dimension)
        if thresholds is None:
            thresholds = RaterThresholds.from_json(load_settings(session).rater_thresholds)
        frame = ratings_frame(session, dimension=dimension, annotator_kinds=("named", "machine"))
    likert = (info.min_value, info.max_value) if info.scale == "likert" else None
    return frame, thresholds, likert
