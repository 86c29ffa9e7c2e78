"""Human raters beside the metrics: each rater scored as if a metric, against the other
raters only, and the "one rater" baseline (Proietti et al., ACL 2025, "human baselines in
MT meta-evaluation").

For rater r, the gold is the mean raw rating of the other raters on each output both r
and at least one other rater rated, and the measure is computed as it is for a metric
(same grouping, same rules; the tau-like's votes are the other raters'). The "one rater"
row is the mean of the raters' values: what one more human would score against the rest.
A metric's value minus it says how far the metric is from a human. Machine raters are
metrics, not raters (`MetaEvalData.raters` holds named human raters only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from meaningbench.analysis.metaeval import MetaEvalData, evaluate
from meaningbench.core.wording import counted

ONE_RATER = "one rater"
ONE_RATER_LABEL = "one rater (baseline)"
GAP_WORDS = (
    "Δ one rater: the metric's value minus the one-rater baseline (each human rater "
    "measured against the other raters only, averaged over raters), that is how far the "
    "metric is from what one more human would score"
)


@dataclass
class HumanRow:
    """One rater (or the one-rater baseline): the measure against the other raters."""

    name: str
    value: float | None
    reason: str | None
    n_outputs: int

    @property
    def label(self) -> str:
        """How a ranking names the row, marked as no metric: "human: rater ann"."""
        return ONE_RATER_LABEL if self.name == ONE_RATER else f"human: {self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rater": self.name,
            "value": self.value,
            "not_defined": self.reason,
            "n_outputs": self.n_outputs,
        }


def row_order(kind: str, label: str, value: float) -> tuple[bool, float]:
    """Where a row of a ranking with human rows goes (a sort key): metrics and the
    one-rater baseline by value, best first, then each rater's own row by value, so the
    metrics and the baseline they are read against stay together at the top."""
    return (kind == "human" and label != ONE_RATER_LABEL, -value)


@dataclass
class HumanBaseline:
    """The human rows of one measure at one grouping, or why there are none."""

    measure: str
    group_by: str
    rows: list[HumanRow] = field(default_factory=list)
    reason: str | None = None

    @property
    def one_rater(self) -> float | None:
        row = next((r for r in self.rows if r.name == ONE_RATER), None)
        return None if row is None else row.value

    def gap(self, value: float | None) -> float | None:
        """A metric's value minus the one-rater baseline (None when either is missing)."""
        base = self.one_rater
        return None if value is None or base is None else value - base

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "group_by": self.group_by,
            "rows": [r.to_dict() for r in self.rows],
            "one_rater": self.one_rater,
            "not_defined": self.reason,
        }


def human_baseline(
    data: MetaEvalData,
    measure: str,
    group_by: str,
    *,
    tie_threshold: float = 5.0,
    seed: int = 0,
) -> HumanBaseline:
    """Each named rater against the others, and their mean, on `measure` at `group_by`."""
    out = HumanBaseline(measure, group_by)
    raters = data.raters
    if raters is None or raters.shape[1] == 0 or not np.isfinite(raters).any():
        out.reason = "no human row: the study has no per-rater ratings (only aggregate labels)"
        return out
    rated = np.isfinite(raters)
    if raters.shape[1] < 2 or not (rated.sum(axis=1) >= 2).any():
        out.reason = "no human row: no output was rated by two raters, so no rater has others to be compared with"
        return out
    names = data.rater_names or [f"rater {k + 1}" for k in range(raters.shape[1])]
    for r in range(raters.shape[1]):
        others = np.delete(raters, r, axis=1)
        has_other = np.isfinite(others).any(axis=1)
        keep = rated[:, r] & has_other
        label = f"rater {names[r]}"
        if keep.sum() < 2:
            why = f"not defined: {counted(int(keep.sum()), 'output')} rated by {names[r]} and another rater"
            out.rows.append(HumanRow(label, None, why, int(keep.sum())))
            continue
        with np.errstate(invalid="ignore"):
            gold = np.nanmean(others[keep], axis=1)
        sub = MetaEvalData(
            human=gold,
            metrics=raters[keep, r][:, None],
            metric_names=[label],
            systems=data.systems[keep],
            sources=data.sources[keep],
            raters=others[keep],
            scale=data.scale,
        )
        v = evaluate(sub, [measure], group_by=group_by, tie_threshold=tie_threshold, seed=seed)
        value = v.values[0]
        out.rows.append(HumanRow(label, value.value, value.reason, int(keep.sum())))
    values = [r.value for r in out.rows if r.value is not None]
    if values:
        n = max(r.n_outputs for r in out.rows)
        out.rows.append(HumanRow(ONE_RATER, float(np.mean(values)), None, n))
    else:
        out.reason = "no human row: the measure is not defined for any rater against the others"
    return out
