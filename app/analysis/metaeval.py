"""Which metric agrees with the humans: meta-evaluation measures, per category, on arrays.

`MetaEvalData` holds the outputs of a study (or any arrays): the human score of each
output, the scores of m metrics, each output's system and source, optionally the raw
per-rater ratings (for tau_like) and categories. `evaluate` computes measures with a
grouping and a category breakdown; a value that cannot be computed is a `MeasureValue`
with `value=None` and a reason ("not defined: ..."), never NaN. Significance between
metrics and the cluster ranking live in `meaningbench.analysis.metaeval_significance`.

Measures are compared on the outputs every metric and the humans scored, so that every
metric is judged on the same outputs (`MetaEvalData.common`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from meaningbench.analysis import metaeval_measures as mm
from meaningbench.analysis.metaeval_choices import DEFAULT_GROUPING, GROUPINGS
from meaningbench.core.wording import counted
from meaningbench.errors import UserError

MEASURES = (
    "pearson",
    "spearman",
    "kendall_b",
    "kendall_c",
    "tau_a",
    "tau_23",
    "acc_eq",
    "acc_eq_star",
    "pdp",
    "spa",
    "tau_like",
)
DEFAULT_MEASURES = ("pearson", "spearman", "kendall_b", "acc_eq_star", "pdp", "spa", "tau_like")
SYSTEM_ONLY = ("spa",)  # measures defined at system level whatever the grouping
ITEM_PAIRS_ONLY = ("tau_like",)  # pairs of outputs of one source, whatever the grouping
SPA_PERMUTATIONS = 1000
# A correlation over two points is ±1 whatever the metric: a measure needs this many
# systems (at system level) or outputs (over all outputs together) to mean anything.
MIN_UNITS = 3
# Below this many systems or outputs a correlation swings widely between resamples: the
# figures carry a warning (`small_n_warning`).
SMALL_N = 10


@dataclass
class MetaEvalData:
    """Outputs aligned across arrays of length n.

    `systems`/`sources`: labels per output (None or "" = no system). `raters`: (n, R) raw
    ratings per rater, NaN where a rater did not rate the output. `categories`: attribute
    name → label per output (None or "" = none). `scale`: the rating scale (min, max).
    """

    human: np.ndarray
    metrics: np.ndarray
    metric_names: list[str]
    systems: np.ndarray
    sources: np.ndarray
    raters: np.ndarray | None = None
    categories: dict[str, np.ndarray] = field(default_factory=dict)
    scale: tuple[float, float] | None = None
    rater_names: list[str] = field(default_factory=list)  # one per column of `raters`

    def __post_init__(self) -> None:
        self.human = np.asarray(self.human, dtype=np.float64)
        self.metrics = np.asarray(self.metrics, dtype=np.float64).reshape(self.human.size, -1)
        self.systems = np.asarray(self.systems, dtype=object)
        self.sources = np.asarray(self.sources, dtype=object)
        if self.metrics.shape[1] != len(self.metric_names):
            raise ValueError("one name per metric column")

    @property
    def n(self) -> int:
        return int(self.human.size)

    def common(self) -> np.ndarray:
        """Outputs with a human score and a score of every metric."""
        return np.asarray(np.isfinite(self.human) & np.isfinite(self.metrics).all(axis=1))

    def subset(self, keep: np.ndarray, metrics: Sequence[int] | None = None) -> MetaEvalData:
        cols = list(range(self.metrics.shape[1])) if metrics is None else list(metrics)
        return MetaEvalData(
            human=self.human[keep],
            metrics=self.metrics[keep][:, cols],
            metric_names=[self.metric_names[c] for c in cols],
            systems=self.systems[keep],
            sources=self.sources[keep],
            raters=None if self.raters is None else self.raters[keep],
            categories={k: np.asarray(v, dtype=object)[keep] for k, v in self.categories.items()},
            scale=self.scale,
            rater_names=list(self.rater_names),
        )

    def has_system(self) -> np.ndarray:
        return np.array([s is not None and str(s) != "" for s in self.systems], dtype=bool)

    def system_codes(self) -> np.ndarray:
        """Integer code per output; outputs without a system each get a code of their own
        (a permutation flips them on their own)."""
        labels = np.array(
            [
                str(s) if ok else f"\0{i}"
                for i, (s, ok) in enumerate(zip(self.systems, self.has_system(), strict=True))
            ]
        )
        return mm.Groups.of(labels).codes

    def source_codes(self) -> np.ndarray:
        return mm.Groups.of(np.array([str(s) for s in self.sources])).codes

    def category(self, attribute: str | None) -> np.ndarray | None:
        if attribute is None:
            return None
        if attribute not in self.categories:
            known = ", ".join(sorted(self.categories)) or "none"
            raise UserError(f"no item attribute {attribute!r}; known attributes: {known}")
        return np.array(
            [
                "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
                for v in self.categories[attribute]
            ],
            dtype=object,
        )


@dataclass
class MeasureValue:
    """One figure: a measure of one metric, at one grouping, on one category ("" = all)."""

    measure: str
    metric: str
    group_by: str
    category: str
    value: float | None
    reason: str | None = None  # why value is None
    n_outputs: int = 0
    details: dict[str, Any] = field(default_factory=dict)  # ε and its search, pair counts
    interval: tuple[float, float] | None = None
    cluster: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "metric": self.metric,
            "group_by": self.group_by,
            "category": self.category or None,
            "value": self.value,
            "not_defined": self.reason,
            "n_outputs": self.n_outputs,
            "interval": list(self.interval) if self.interval else None,
            "cluster": self.cluster,
            **self.details,
        }


@dataclass
class MetaEvalTable:
    values: list[MeasureValue]
    group_by: str
    by: str | None
    pairs_within: str | None
    tie_threshold: float
    n_outputs: int
    n_left_out: int
    seed: int = 0  # SPA's permutations

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([v.to_dict() for v in self.values])

    def get(self, measure: str, metric: str, category: str = "") -> MeasureValue:
        for v in self.values:
            if v.measure == measure and v.metric == metric and v.category == category:
                return v
        raise KeyError((measure, metric, category))


# ---------------------------------------------------------------- building blocks


def check_measures(measures: Sequence[str]) -> list[str]:
    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise UserError(f"unknown measure {', '.join(unknown)}; known: {', '.join(MEASURES)}")
    return list(dict.fromkeys(measures))


def check_grouping(group_by: str) -> str:
    if group_by not in GROUPINGS:
        raise UserError(f"unknown grouping {group_by!r}; known: {', '.join(GROUPINGS)}")
    return group_by


def check_tie_threshold(threshold: float, scale: tuple[float, float] | None) -> float:
    """A rater tie threshold must lie within the span of the rating scale."""
    if threshold < 0:
        raise UserError(f"the tie threshold must be 0 or more, not {threshold:g}")
    if scale is not None:
        span = scale[1] - scale[0]
        if threshold > span:
            raise UserError(
                f"tie threshold {threshold:g} is outside the rating scale "
                f"{scale[0]:g}–{scale[1]:g} (differences go up to {span:g})"
            )
    return float(threshold)


def system_means(
    human: np.ndarray, x: np.ndarray, systems: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(S,) human and (B, S) metric means per system; outputs without a system are left
    out. Also the system labels."""
    ok = np.array([s is not None and str(s) != "" for s in systems], dtype=bool)
    labels, codes = np.unique(np.array([str(s) for s in systems[ok]]), return_inverse=True)
    s = labels.size
    n = np.bincount(codes, minlength=s).astype(np.float64)
    hm = np.bincount(codes, weights=human[ok], minlength=s) / np.maximum(n, 1)
    xr = np.atleast_2d(x)[:, ok]
    xm = np.stack([np.bincount(codes, weights=row, minlength=s) for row in xr]) / np.maximum(n, 1)
    return hm, xm, labels


@dataclass(frozen=True)
class Units:
    """What a measure at a grouping runs over: `n` systems, sources or outputs."""

    n: int
    noun: str  # "system", "source" or "output"

    def __str__(self) -> str:
        return counted(self.n, self.noun)

    @property
    def small(self) -> bool:
        return self.n < SMALL_N


def units_of(data: MetaEvalData, group_by: str) -> Units:
    """The systems (system level), sources (per source) or outputs (all together) a
    measure at `group_by` is computed over, on the outputs every metric scored."""
    work = data.subset(data.common())
    if group_by in ("system", "per-system"):
        return Units(len({str(s) for s in work.systems[work.has_system()]}), "system")
    if group_by == "item":
        return Units(len({str(s) for s in work.sources}), "source")
    return Units(work.n, "output")


def small_n_warning(units: Units) -> str | None:
    """The warning small-n figures carry (None when there are enough)."""
    if not units.small:
        return None
    return (
        f"Only {units}: a correlation over so few {units.noun}s swings widely between "
        "samples (see the intervals)."
    )


def grouping_of(data: MetaEvalData, group_by: str) -> mm.Groups:
    if group_by == "none":
        return mm.Groups.single(data.n)
    if group_by == "item":
        return mm.Groups.of(data.source_codes())
    if group_by == "per-system":
        return mm.Groups.of(data.system_codes())
    raise ValueError(group_by)


@dataclass(frozen=True)
class SystemCells:
    """Where each output sits in the (S, N) system × source matrix of the sources every
    system has an output of (the paired design SPA needs): `cells` per output, -1 for an
    output left out; systems and sources in label order."""

    cells: np.ndarray
    systems: list[str]
    n_sources: int

    def means(self, x: np.ndarray) -> np.ndarray:
        """(B, S, N) mean score of each cell for B rows of scores on the outputs."""
        x = np.atleast_2d(x)
        size = len(self.systems) * self.n_sources
        kept = self.cells >= 0
        codes = self.cells[kept]
        count = np.bincount(codes, minlength=size).astype(np.float64)
        sums = np.stack([np.bincount(codes, weights=row[kept], minlength=size) for row in x])
        return (sums / np.maximum(count, 1)).reshape(x.shape[0], len(self.systems), -1)


def system_cells(data: MetaEvalData) -> SystemCells:
    ok = np.flatnonzero(data.has_system())
    systems, sys_code = np.unique([str(s) for s in data.systems[ok]], return_inverse=True)
    sources, src_code = np.unique([str(s) for s in data.sources[ok]], return_inverse=True)
    seen = np.zeros((systems.size, sources.size), dtype=bool)
    seen[sys_code, src_code] = True
    complete = np.asarray(seen.all(axis=0), dtype=bool)  # (no system: no source either)
    column = np.cumsum(complete) - 1
    n_src = int(complete.sum())
    cells = np.full(data.n, -1, dtype=np.intp)
    keep = complete[src_code]
    cells[ok[keep]] = sys_code[keep] * n_src + column[src_code[keep]]
    return SystemCells(cells, [str(s) for s in systems], n_src)


def system_matrix(data: MetaEvalData, column: np.ndarray) -> tuple[np.ndarray, list[str], int]:
    """(S, N) mean scores of each system on the sources every system has an output of
    (the paired design SPA needs), the system labels and N."""
    cells = system_cells(data)
    return cells.means(column)[0], cells.systems, cells.n_sources


def spa_signs(seed: int, n_sources: int) -> np.ndarray:
    """The source sign flips behind every SPA p-value (one draw per seed)."""
    return mm.permutation_signs(seed, SPA_PERMUTATIONS, n_sources)


# ---------------------------------------------------------------- one measure


_ROW_MEASURES = {
    "pearson": mm.pearson,
    "spearman": mm.spearman,
    "kendall_b": mm.kendall_b,
    "kendall_c": mm.kendall_c,
    "tau_a": mm.tau_a,
    "tau_23": mm.tau_23,
    "acc_eq": mm.acc_eq,
    "pdp": mm.pdp,
}


def row_measure(
    measure: str, h: np.ndarray, x: np.ndarray, groups: mm.Groups, seed: int = 0
) -> np.ndarray:
    """A grouped measure on B rows of metric scores (NaN = not defined on that row);
    `seed` draws acc*_eq's sample of pairs when there are too many to search them all."""
    if measure == "acc_eq_star":
        return mm.acc_eq_star(h, x, groups, seed=seed).value
    return _ROW_MEASURES[measure](h, x, groups)


def _why_undefined(h: np.ndarray, x: np.ndarray, groups: mm.Groups, what: str) -> str:
    if h.size < 2:
        return f"not defined: only {h.size} {what} to compare"
    sizes = np.bincount(groups.codes, minlength=groups.n_groups)
    if not (sizes >= 2).any():
        return f"not defined: no group has two {what} to compare"
    if np.ptp(h) == 0:
        return "not defined: the human scores are constant"
    if np.ptp(x) == 0:
        return "not defined: the metric's scores are constant"
    return "not defined: every group's scores are constant on one side"


def _value(
    measure: str,
    data: MetaEvalData,
    j: int,
    group_by: str,
    *,
    tie_threshold: float,
    pairs_within: np.ndarray | None,
    seed: int,
) -> tuple[float | None, str | None, dict[str, Any]]:
    h = data.human
    x = data.metrics[:, j]
    details: dict[str, Any] = {}
    if measure == "tau_like":
        if data.raters is None or not np.isfinite(data.raters).any():
            return None, "not defined: no per-rater ratings", details
        t = mm.tau_like(data.raters, x, data.sources, threshold=tie_threshold, within=pairs_within)
        details.update(
            concordant=int(t.concordant[0]),
            discordant=int(t.discordant[0]),
            pairs_compared=t.pairs_considered,
        )
        if t.concordant[0] + t.discordant[0] == 0:
            why = "not defined: no pair of outputs of one source has a rater majority"
            return None, why, details
        return float(t.tau[0]), None, details
    n_systems = len({str(s) for s in data.systems[data.has_system()]})
    # SPA judges pairs of systems, and two systems are one pair; a correlation over two
    # systems' means is ±1 whatever the metric.
    if measure == "spa" and n_systems < 2:
        return None, f"not defined: {counted(n_systems, 'system')}", details
    if measure != "spa" and group_by == "system" and n_systems < MIN_UNITS:
        return None, f"not defined: {counted(n_systems, 'system')}", details
    if group_by == "none" and data.n < MIN_UNITS:
        return None, f"not defined: {counted(data.n, 'output')}", details
    if measure == "spa":
        hm, labels, n_src = system_matrix(data, h)
        xm, _, _ = system_matrix(data, x)
        details["sources"] = n_src
        if len(labels) < 2 or n_src == 0:
            return None, "not defined: no source has an output of every system", details
        if not np.ptp(hm, axis=0).any():  # p = 1 for every pair of systems, whatever the metric
            return None, "not defined: the human scores do not differ between systems", details
        signs = spa_signs(seed, n_src)
        return mm.spa(hm, xm, signs), None, details
    if group_by == "system":
        hs, xs, sys_labels = system_means(h, x[None, :], data.systems)
        groups, hh, xx, what = mm.Groups.single(sys_labels.size), hs, xs, "systems"
    else:
        groups, hh, xx, what = grouping_of(data, group_by), h, x[None, :], "outputs"
    if measure == "acc_eq_star":
        cal = mm.acc_eq_star(hh, xx, groups, seed=seed)
        v = float(cal.value[0])
        if cal.sampled_pairs:
            details["epsilon_searched_on_pairs"] = cal.sampled_pairs
        if np.isfinite(v):
            details.update(epsilon=float(cal.epsilon[0]), epsilon_candidates=int(cal.candidates[0]))
    else:
        v = float(row_measure(measure, hh, xx, groups)[0])
    if not np.isfinite(v):
        return None, _why_undefined(hh, np.atleast_2d(xx)[0], groups, what), details
    return v, None, details


def evaluate(
    data: MetaEvalData,
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    group_by: str = DEFAULT_GROUPING,
    by: str | None = None,
    pairs_within: str | None = None,
    tie_threshold: float = 5.0,
    seed: int = 0,
) -> MetaEvalTable:
    """Every measure of every metric, overall ("" category) and per category of `by`.

    `pairs_within`: tau_like compares two outputs only when they share this attribute.
    `seed` draws SPA's permutations.
    """
    measures = check_measures(measures)
    group_by = check_grouping(group_by)
    tie_threshold = check_tie_threshold(tie_threshold, data.scale)
    keep = data.common()
    work = data.subset(keep)
    cats = work.category(by)
    within_all = work.category(pairs_within)
    parts: list[tuple[str, np.ndarray]] = [("", np.ones(work.n, dtype=bool))]
    if cats is not None:
        for c in sorted({str(c) for c in cats if c != ""}):
            parts.append((c, cats == c))
    out: list[MeasureValue] = []
    for category, mask in parts:
        sub = work.subset(mask)
        within = None if within_all is None else within_all[mask]
        for measure in measures:
            gb = (
                "system"
                if measure in SYSTEM_ONLY
                else "item"
                if measure in ITEM_PAIRS_ONLY
                else group_by
            )
            for j, name in enumerate(sub.metric_names):
                v: float | None
                why: str | None
                det: dict[str, Any]
                if sub.n < 2:
                    v, why, det = None, f"not defined: {counted(sub.n, 'output')}", {}
                else:
                    v, why, det = _value(
                        measure,
                        sub,
                        j,
                        gb,
                        tie_threshold=tie_threshold,
                        pairs_within=within,
                        seed=seed,
                    )
                out.append(MeasureValue(measure, name, gb, category, v, why, sub.n, det))
    return MetaEvalTable(
        values=out,
        group_by=group_by,
        by=by,
        pairs_within=pairs_within,
        tie_threshold=tie_threshold,
        n_outputs=work.n,
        n_left_out=int((~keep).sum()),
        seed=seed,
    )
