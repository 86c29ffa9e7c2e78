"""Is one metric significantly better than another: paired resampling tests, the p-value
matrix and the ranking of metrics in significance clusters.

Tests (Deutsch et al. 2021; `nlpstats` is the reference):
- perm-both: each resample swaps the two metrics' scores of whole systems (each with
  probability ½) and then of whole sources, so an output is swapped when exactly one of
  its system and its source was (nlpstats' `_permute_both`; MTME's PermutationSigDiff,
  which WMT uses, swaps each output independently instead); perm-systems / perm-items
  swap only systems / only sources; perm-outputs swaps each output on its own (MTME's
  PermutationSigDiff, not at system level except for SPA). Scores are first standardised per metric (z over the
  compared outputs), as nlpstats and MTME do, for every measure (the tau-like too: a
  positive affine map leaves its value alone), so that swapped values are on one scale.
  p(A > B) is the share of resamples whose difference A − B is at least the observed
  one. acc*_eq searches its ε again on every resample, as MTME's PermutationSigDiff with
  its tie-optimised Kendall does.
- boot-both: each resample draws systems and sources with replacement (an output enters
  once per draw of its system times per draw of its source); p(A > B) is the share of
  resamples whose difference is at least twice the observed one (the shifted-null rule
  of Berg-Kirkpatrick et al. 2012). Its percentiles also give each metric's 95% interval.
- williams: Williams' test of two dependent Pearson correlations (the existing rule).
- pairs: MTME's pairwise permutation test (`PairwisePermutationSigDiff`, the WMT24/25
  segment-level test), which swaps the two metrics' outcomes of pairs of outputs, each
  metric at its own ε, for the Kendall-type measures
  (`meaningbench.analysis.metaeval_pairs`); optionally with MTME's early stopping.

Every pair of metrics sees the same draws (one seeded generator). At system level the
tests are vectorised over resamples: a system's mean after swapping is linear in the
swap signs, so one matrix product per system gives every resample of every metric.

Clusters follow MTME's rule (`AssignRanks`): metrics sorted by value, best first; a
metric opens a new cluster when a member of the current cluster is significantly better
than it (p ≤ α). So no member of a cluster is significantly worse than a better member
of the same cluster, and each cluster's first metric is significantly worse than some
member of the cluster above (other members need not be).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from meaningbench.analysis import metaeval_measures as mm
from meaningbench.analysis import metaeval_pairs as mp
from meaningbench.analysis.metaeval import (
    ITEM_PAIRS_ONLY,
    SYSTEM_ONLY,
    MeasureValue,
    MetaEvalData,
    MetaEvalTable,
    Units,
    check_grouping,
    check_measures,
    check_tie_threshold,
    evaluate,
    grouping_of,
    row_measure,
    small_n_warning,
    spa_signs,
    system_cells,
    system_means,
    units_of,
)
from meaningbench.analysis.metaeval_boot_pairs import boot_pair_samples
from meaningbench.analysis.metaeval_choices import GROUPING_NAMES, TESTS
from meaningbench.analysis.metaeval_spa import spa_deltas
from meaningbench.analysis.metaeval_swap import swap_pairs, swap_rows_of
from meaningbench.analysis.parallel import single_threaded_blas
from meaningbench.core.wording import counted
from meaningbench.errors import UserError

# (metric i, metric j) → the difference i − j on every resample
Deltas = Iterator[tuple[tuple[int, int], np.ndarray]]


class Signs(NamedTuple):
    """One permutation draw for all pairs: ±1 per resample and system (a) and per
    resample and source (b); an output's sign is a[its system] · b[its source]."""

    a: np.ndarray
    b: np.ndarray
    sys_codes: np.ndarray
    src_codes: np.ndarray


PERMUTATION_TESTS = ("perm-both", "perm-items", "perm-systems", "perm-outputs")
ROW_CELLS = 2_000_000  # resample rows × outputs per block of the generic path
NEG_CELLS = 200_000_000  # resample rows × outputs of swap flags kept for every pair (bytes)
# Beyond these a run would not finish (or not fit in memory) on any machine it is meant for;
# a seed is what numpy's generators take on every platform.
MAX_RESAMPLES = 100_000
MAX_SEED = 2**32 - 1


@dataclass
class Ranking:
    """Metrics ranked by one measure, with the p-value matrix behind the clusters."""

    measure: str
    group_by: str
    test: str
    resamples: int
    seed: int
    alpha: float
    order: list[str]  # metrics with a value, best first
    values: dict[str, float | None]
    reasons: dict[str, str]  # metric → why it has no value
    p_values: pd.DataFrame  # [A, B] = p-value of "A is better than B" (NaN on the diagonal)
    clusters: dict[str, int]  # 1 = top cluster
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    n_outputs: int = 0
    units: Units | None = None  # what the measure runs over (6 systems, 360 outputs)
    # pairs test: the draws each pair of metrics used ([A, B], early stopping) and its rule
    draws: pd.DataFrame | None = None
    early_stop: mp.EarlyStop | None = None

    @property
    def over(self) -> str:
        """What the correlation runs over, as the screens and the report say it."""
        if self.units is None or self.units.noun == "output":
            return counted(self.n_outputs, "output")
        return f"{self.units} ({counted(self.n_outputs, 'output')})"

    @property
    def warning(self) -> str | None:
        """What a reader must know before trusting the clusters: too few systems or
        outputs, or no metric that agrees with the humans at all."""
        parts = [] if self.units is None else [small_n_warning(self.units)]
        values = [self.values.get(m) for m in self.order]
        if values and all(v is not None and v <= 0 for v in values):
            parts.append("Every value is 0 or below: no metric agrees with the humans here.")
        return " ".join(p for p in parts if p) or None

    def p_text(self, p: float) -> str:
        """A p-value as the tables print it (see `p_text`)."""
        return p_text(p, None if self.test == "williams" else self.resamples)

    def to_dict(self) -> dict[str, Any]:
        names = list(self.p_values.index)
        return {
            "measure": self.measure,
            "group_by": self.group_by,
            "grouping": GROUPING_NAMES.get(self.group_by, self.group_by),
            "test": self.test,
            "resamples": self.resamples,
            "seed": self.seed,
            "alpha": self.alpha,
            "n_outputs": self.n_outputs,
            "n_units": None if self.units is None else self.units.n,
            "units": None if self.units is None else f"{self.units.noun}s",
            "small_n_warning": self.warning,
            "clusters_meaning": CLUSTER_MEANING,
            "ranking": [
                {
                    "metric": m,
                    "value": self.values.get(m),
                    "cluster": self.clusters.get(m),
                    "interval": list(self.intervals[m]) if m in self.intervals else None,
                    "not_defined": self.reasons.get(m),
                    **self.details.get(m, {}),
                }
                for m in self.order + [m for m in names if m not in self.order]
            ],
            "p_values": {
                a: {b: (None if not np.isfinite(v) else float(v)) for b, v in row.items()}
                for a, row in self.p_values.to_dict(orient="index").items()
            },
            "early_stop": None
            if self.early_stop is None
            else {
                "block": self.early_stop.block,
                "stop_below": self.early_stop.low,
                "stop_above": self.early_stop.high,
            },
            "resamples_used": None
            if self.draws is None
            else {
                a: {b: int(v) for b, v in row.items() if a != b}
                for a, row in self.draws.to_dict(orient="index").items()
            },
        }


# What a cluster is, in the words of every place that shows one (MTME's rule below).
CLUSTER_LINE = (
    "A new cluster starts at a metric that one of the cluster above beats significantly "
    "(p ≤ α); not all of that cluster need beat it."
)
CLUSTER_MEANING = (
    "Metrics are taken best first; a metric opens a new cluster when a metric of the "
    "current cluster is significantly better than it (p ≤ α, the rule of the WMT metrics "
    "tasks). So within a cluster no metric is significantly worse than a better one, but a "
    "cluster is not significantly below the one above it: only its first metric is "
    "significantly worse than some metric there, and two metrics of neighbouring clusters "
    "may not differ significantly at all (see the p-values)."
)


def p_text(p: float, resamples: int | None) -> str:
    """A p-value to 3 decimals; one below what the resamples can tell (1 / resamples, or
    0.001 for an analytic test) reads "< 0.001", never 0.000."""
    if not np.isfinite(p):
        return "–"
    floor = max(1.0 / resamples, 0.001) if resamples else 0.001
    if p < floor:
        return f"< {floor:.3g}"
    return f"{p:.3f}"


def assign_clusters(p_sorted: np.ndarray, alpha: float) -> list[int]:
    """Cluster number per metric, metrics sorted best first; p_sorted[i, j] is the
    p-value of "metric i is better than metric j"."""
    clusters: list[int] = []
    current, start = 1, 0
    for i in range(p_sorted.shape[0]):
        if i and (p_sorted[start:i, i] <= alpha).any():
            current += 1
            start = i
        clusters.append(current)
    return clusters


def _standardise(x: np.ndarray) -> np.ndarray:
    mu = x.mean(axis=0)
    sd = x.std(axis=0)
    return np.asarray((x - mu) / np.where(sd > 0, sd, 1.0))


class _Stat:
    """The ranked measure as a function of B rows of metric scores on the outputs."""

    def __init__(
        self,
        data: MetaEvalData,
        measure: str,
        group_by: str,
        tie_threshold: float,
        pairs_within: np.ndarray | None,
        seed: int = 0,
    ) -> None:
        self.data, self.measure, self.group_by = data, measure, group_by
        self.tie_threshold, self.pairs_within, self.seed = tie_threshold, pairs_within, seed
        self.groups = None if group_by == "system" else grouping_of(data, group_by)
        # pairwise measures: resamples from the four differences each pair can take
        self.swap = (
            None if self.groups is None else swap_pairs(data.human, self.groups, measure, seed)
        )
        if measure == "spa":  # the human p-values and the source flips stay fixed
            self.cells = system_cells(data)
            self.spa_signs = spa_signs(seed, self.cells.n_sources)
            human = self.cells.means(data.human)[0]
            self.human_p = mm.pairwise_system_pvalues(human, self.spa_signs)

    def rows(
        self,
        x: np.ndarray,
        h: np.ndarray | None = None,
        groups: mm.Groups | None = None,
        data: MetaEvalData | None = None,
        within: np.ndarray | None = None,
    ) -> np.ndarray:
        """The measure on rows `x` of this stat's outputs, or of a resample `data` whose
        outputs carry the categories `within` (the resampled `pairs_within`)."""
        d = data or self.data
        hh = d.human if h is None else h
        if self.measure == "spa":
            assert data is None and h is None, "spa is ranked by permutation tests only"
            return mm.spa_rows(self.human_p, self.cells.means(x), self.spa_signs)
        if self.measure == "tau_like":
            assert d.raters is not None
            return mm.tau_like(
                d.raters,
                x,
                d.sources,
                threshold=self.tie_threshold,
                within=self.pairs_within if data is None else within,
            ).tau
        return row_measure(
            self.measure, hh, x, groups or self.groups or mm.Groups.single(1), seed=self.seed
        )


# ---------------------------------------------------------------- permutation


def _perm_signs(
    rng: np.random.Generator, test: str, r: int, n_sys: int, n_src: int
) -> tuple[np.ndarray, np.ndarray]:
    a = (
        rng.random((r, n_sys)) > 0.5
        if test in ("perm-both", "perm-systems", "perm-outputs")
        else np.zeros((r, n_sys), bool)
    )
    b = (
        rng.random((r, n_src)) > 0.5
        if test in ("perm-both", "perm-items")
        else np.zeros((r, n_src), bool)
    )
    return np.where(a, -1.0, 1.0), np.where(b, -1.0, 1.0)


def permutation_pvalues(
    stat: _Stat,
    z: np.ndarray,
    observed: np.ndarray,
    test: str,
    resamples: int,
    seed: int,
    early_stop: mp.EarlyStop | None = None,
    used: np.ndarray | None = None,
) -> np.ndarray:
    """(M, M) p-values of "row metric better than column metric". `early_stop` (SPA
    only) stops a pair of metrics as MTME's PermutationSigDiff does; `used`, when given,
    receives the resamples each pair of metrics used."""
    data = stat.data
    m = z.shape[1]
    sys_codes, src_codes = data.system_codes(), data.source_codes()
    if test == "perm-outputs":  # every output its own unit (MTME's PermutationSigDiff)
        sys_codes, src_codes = np.arange(data.n), np.zeros(data.n, dtype=np.intp)
    n_sys, n_src = int(sys_codes.max()) + 1, int(src_codes.max()) + 1
    rng = np.random.default_rng(seed)
    a, b = _perm_signs(rng, test, resamples, n_sys, n_src)
    ge = np.zeros((m, m))  # resamples with delta(A−B) ≥ observed
    le = np.zeros((m, m))
    valid = np.zeros((m, m))
    signs = Signs(a, b, sys_codes, src_codes)
    if stat.measure == "spa":  # from the system × source matrix, not the system means
        deltas = _spa_deltas(stat, z, signs, early_stop, observed)
    elif stat.group_by == "system":
        deltas = _system_level_deltas(stat, z, signs)
    elif stat.measure == "pearson":
        deltas = _pearson_deltas(stat, z, signs)
    else:
        deltas = _generic_deltas(stat, z, signs)
    for (i, j), delta in deltas:
        obs = observed[i] - observed[j]
        tol = 1e-9 * max(1.0, abs(obs))
        ok = np.isfinite(delta)
        ge[i, j] = (delta[ok] >= obs - tol).sum()
        le[i, j] = (delta[ok] <= obs + tol).sum()
        valid[i, j] = ok.sum()
        if used is not None:
            used[i, j] = used[j, i] = delta.size
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(valid > 0, ge / valid, np.nan)
        q = np.where(valid.T > 0, le.T / valid.T, np.nan)
    out = np.where(np.triu(np.ones((m, m), bool), 1), p, q)
    np.fill_diagonal(out, np.nan)
    return out


def _system_level_deltas(stat: _Stat, z: np.ndarray, signs: Signs) -> Deltas:
    a, b, sys_codes, src_codes = signs
    data = stat.data
    real = data.has_system()
    systems = np.unique(sys_codes[real])
    hs = np.array([data.human[sys_codes == k].mean() for k in systems])
    n_k = np.array([(sys_codes == k).sum() for k in systems], dtype=np.float64)
    mu = np.stack([z[sys_codes == k].mean(axis=0) for k in systems])  # (S, M)
    # T[r, k, m] = Σ over system k's outputs of the source sign × standardised score.
    t = np.stack([b[:, src_codes[sys_codes == k]] @ z[sys_codes == k] for k in systems], axis=1)
    asys = a[:, systems]  # (R, S)
    groups = mm.Groups.single(systems.size)
    m = z.shape[1]
    for i in range(m):
        for j in range(i + 1, m):
            mid = (mu[:, i] + mu[:, j]) / 2.0
            half = asys * (t[:, :, i] - t[:, :, j]) / (2.0 * n_k)
            both = np.concatenate([mid + half, mid - half])
            vals = stat.rows(both, hs, groups)
            r = a.shape[0]
            yield (i, j), vals[:r] - vals[r:]


def _pearson_r(
    n: np.ndarray,
    sx: np.ndarray,
    sxx: np.ndarray,
    sh: np.ndarray,
    shh: np.ndarray,
    sxh: np.ndarray,
    weight: np.ndarray | None = None,
    axis: int = -1,
) -> np.ndarray:
    """Per-group Pearson r from (weighted) sums, averaged over the groups where it is
    defined (`weight`: how many times each group counts), along `axis`."""
    with np.errstate(invalid="ignore", divide="ignore"):
        vx = n * sxx - sx * sx
        vh = n * shh - sh * sh
        ok = (n >= 2) & mm.has_spread(vx, n * sxx) & mm.has_spread(vh, n * shh)
        r = np.where(ok, (n * sxh - sx * sh) / np.sqrt(np.where(ok, vx * vh, 1.0)), 0.0)
        w = ok * (1.0 if weight is None else weight)
        count = w.sum(axis=axis)
        return np.where(count > 0, (r * w).sum(axis=axis) / np.maximum(count, 1e-300), np.nan)


def _pearson_deltas(stat: _Stat, z: np.ndarray, signs: Signs) -> Deltas:
    """Pearson at global, item or per-system level without building resampled scores.

    After swapping, a group's sums of x, x² and h·x move by Σ s·f over its outputs, with
    f = z, z² and h·z of each metric (s = ±1): one matrix product per group gives those
    sums for every resample and metric; a pair of metrics is a difference of two.
    """
    assert stat.groups is not None
    a, b, sys_codes, src_codes = signs
    h = stat.data.human
    m = z.shape[1]
    members = stat.groups.members()
    g = len(members)
    n_g = np.array([idx.size for idx in members], dtype=np.float64)[:, None]  # (G, 1)
    sh = np.array([h[idx].sum() for idx in members])[:, None]
    shh = np.array([(h[idx] ** 2).sum() for idx in members])[:, None]
    base_x = np.stack([z[idx].sum(axis=0) for idx in members])  # (G, M)
    base_xx = np.stack([(z[idx] ** 2).sum(axis=0) for idx in members])
    base_xh = np.stack([(h[idx, None] * z[idx]).sum(axis=0) for idx in members])
    feats = np.concatenate([z, z * z, h[:, None] * z], axis=1)  # (n, 3M)
    ii, jj = np.triu_indices(m, 1)
    mid = [(base[:, ii] + base[:, jj]) / 2 for base in (base_x, base_xx, base_xh)]  # (G, P)
    r_total = a.shape[0]
    block = max(1, min(r_total, (2 * ROW_CELLS) // max(1, g * ii.size)))
    out = np.empty((r_total, ii.size))
    for r0 in range(0, r_total, block):
        ar, br = a[r0 : r0 + block], b[r0 : r0 + block]
        q = np.stack(
            [(ar[:, sys_codes[idx]] * br[:, src_codes[idx]]) @ feats[idx] for idx in members],
            axis=1,
        )  # (Rb, G, 3M)
        d = [(q[:, :, k * m + ii] - q[:, :, k * m + jj]) / 2 for k in range(3)]  # (Rb, G, P)
        ra = _pearson_r(n_g, mid[0] + d[0], mid[1] + d[1], sh, shh, mid[2] + d[2], axis=1)
        rb = _pearson_r(n_g, mid[0] - d[0], mid[1] - d[1], sh, shh, mid[2] - d[2], axis=1)
        out[r0 : r0 + ar.shape[0]] = ra - rb
    for k, (i, j) in enumerate(zip(ii, jj, strict=True)):
        yield (int(i), int(j)), out[:, k]


def _pearson_bootstrap(
    stat: _Stat,
    x: np.ndarray,
    cs: np.ndarray,
    cj: np.ndarray,
    sys_codes: np.ndarray,
    src_codes: np.ndarray,
) -> np.ndarray:
    """(R, M) Pearson at global, item or per-system level on resamples given by the draw
    counts of systems (cs) and sources (cj), from weighted sums per group."""
    h = stat.data.human
    feats = np.column_stack([np.ones_like(h), h, h * h, x, x * x, h[:, None] * x])
    m = x.shape[1]
    if stat.group_by == "item":  # each drawn copy of a source is a group of its own
        codes, group_w, within = src_codes, cj, cs[:, sys_codes]
    elif stat.group_by == "per-system":
        codes, group_w, within = sys_codes, cs, cj[:, src_codes]
    else:
        codes, group_w, within = (
            np.zeros_like(sys_codes),
            np.ones((cs.shape[0], 1)),
            (cs[:, sys_codes] * cj[:, src_codes]),
        )
    members = mm.Groups(codes, int(codes.max()) + 1).members()
    sums = np.stack([within[:, idx] @ feats[idx] for idx in members], axis=1)  # (R, G, F)
    n, sh, shh = sums[:, :, 0:1], sums[:, :, 1:2], sums[:, :, 2:3]
    sx, sxx, sxh = sums[:, :, 3 : 3 + m], sums[:, :, 3 + m : 3 + 2 * m], sums[:, :, 3 + 2 * m :]
    return _pearson_r(n, sx, sxx, sh, shh, sxh, weight=group_w[:, :, None], axis=1)


def stops_early(delta: np.ndarray, observed: float, rule: mp.EarlyStop) -> bool:
    """MTME's PermutationSigDiff rule at a block boundary: the p-value of "the metric with
    the higher value is better" so far is below `rule.low` or above `rule.high`."""
    ok = np.isfinite(delta)
    if not ok.any():
        return False
    tol = 1e-9 * max(1.0, abs(observed))
    hits = delta[ok] >= observed - tol if observed >= 0 else delta[ok] <= observed + tol
    p = float(hits.mean())
    return p < rule.low or p > rule.high


def _spa_deltas(
    stat: _Stat,
    z: np.ndarray,
    signs: Signs,
    early_stop: mp.EarlyStop | None,
    observed: np.ndarray,
) -> Deltas:
    """SPA's resamples with every metric's null sums shared (`metaeval_spa`); the same
    draws and blocks as `_generic_deltas`."""
    a, b, sys_codes, src_codes = signs

    def output_signs(r0: int, r1: int) -> np.ndarray:
        return np.asarray(a[r0:r1][:, sys_codes] * b[r0:r1][:, src_codes])

    def stop(delta: np.ndarray, pair: tuple[int, int]) -> bool:
        assert early_stop is not None
        return stops_early(delta, observed[pair[0]] - observed[pair[1]], early_stop)

    block = early_stop.block if early_stop else max(1, ROW_CELLS // max(z.shape[0], 1))
    return spa_deltas(
        stat.cells,
        stat.human_p,
        stat.spa_signs,
        z,
        output_signs,
        (a.shape[0], block),
        None if early_stop is None else stop,
    )


def _generic_deltas(
    stat: _Stat,
    z: np.ndarray,
    signs: Signs,
    early_stop: mp.EarlyStop | None = None,
    observed: np.ndarray | None = None,
) -> Deltas:
    a, b, sys_codes, src_codes = signs
    r, n = a.shape[0], z.shape[0]
    block = early_stop.block if early_stop else max(1, ROW_CELLS // max(n, 1))
    m = z.shape[1]
    # The swap path reads which outputs each resample swaps: the same for every pair of
    # metrics, so made once where it fits.
    neg = None
    if stat.swap is not None and r * n <= NEG_CELLS:
        neg = np.concatenate([_negatives(signs, r0, r0 + block) for r0 in range(0, r, block)])
    for i in range(m):
        for j in range(i + 1, m):
            mid = (z[:, i] + z[:, j]) / 2.0
            half = (z[:, i] - z[:, j]) / 2.0
            out = np.empty(r)
            swapped = None if stat.swap is None else swap_rows_of(stat.swap, mid + half, mid - half)
            for r0 in range(0, r, block):
                k = min(block, r - r0)
                if swapped is not None:
                    vals = swapped(
                        _negatives(signs, r0, r0 + block) if neg is None else neg[r0 : r0 + k]
                    )
                else:
                    s = a[r0 : r0 + block][:, sys_codes] * b[r0 : r0 + block][:, src_codes]
                    vals = stat.rows(np.concatenate([mid + s * half, mid - s * half]))
                out[r0 : r0 + k] = vals[:k] - vals[k:]
                if early_stop is None or observed is None or k < block:
                    continue
                if stops_early(out[: r0 + k], observed[i] - observed[j], early_stop):
                    out = out[: r0 + k]
                    break
            yield (i, j), out


def _negatives(signs: Signs, r0: int, r1: int) -> np.ndarray:
    """(r1 − r0, n) uint8: 1 where resample r swaps the output (its sign a·b is −1)."""
    a, b, sys_codes, src_codes = signs
    return np.ascontiguousarray(
        (a[r0:r1][:, sys_codes] < 0) ^ (b[r0:r1][:, src_codes] < 0), dtype=np.uint8
    )


# ---------------------------------------------------------------- bootstrap


def system_bootstrap(stat: _Stat, x: np.ndarray, draws: np.ndarray, cj: np.ndarray) -> np.ndarray:
    """(R, M) system-level measure: `draws` (R, S) are the system codes drawn per
    resample, `cj` (R, N) how many times each source was drawn. A system's mean is
    weighted by its sources' draw counts, for every resample in one product."""
    data = stat.data
    sys_codes, src_codes = data.system_codes(), data.source_codes()
    real = np.unique(sys_codes[data.has_system()])
    full = np.column_stack([data.human, x])
    sums = np.stack([cj[:, src_codes[sys_codes == k]] @ full[sys_codes == k] for k in real], 1)
    weight = np.stack([cj[:, src_codes[sys_codes == k]].sum(axis=1) for k in real], 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / weight[:, :, None]  # (R, S, 1 + M)
    pos = np.searchsorted(real, draws)
    picked = np.take_along_axis(means, pos[:, :, None], axis=1)  # (R, S, 1 + M)
    h = picked[:, :, 0]
    groups = mm.Groups.single(draws.shape[1])
    out = np.empty((draws.shape[0], x.shape[1]))
    for m in range(x.shape[1]):
        out[:, m] = stat.rows(picked[:, :, 1 + m], h, groups)
    return out


def bootstrap_samples(stat: _Stat, x: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(R, M): the measure of every metric on each resample of systems and sources."""
    data = stat.data
    rng = np.random.default_rng(seed)
    sys_codes, src_codes = data.system_codes(), data.source_codes()
    n_sys, n_src = int(sys_codes.max()) + 1, int(src_codes.max()) + 1
    if stat.group_by == "system":
        real = np.unique(sys_codes[data.has_system()])
        draws = real[rng.integers(0, real.size, (resamples, real.size))]
        src_draw = rng.integers(0, n_src, (resamples, n_src))
        cj = np.stack([np.bincount(d, minlength=n_src) for d in src_draw]).astype(np.float64)
        return system_bootstrap(stat, x, draws, cj)
    draws_s = rng.integers(0, n_sys, (resamples, n_sys))
    draws_j = rng.integers(0, n_src, (resamples, n_src))
    counts_s = np.stack([np.bincount(d, minlength=n_sys) for d in draws_s]).astype(np.float64)
    counts_j = np.stack([np.bincount(d, minlength=n_src) for d in draws_j]).astype(np.float64)
    if stat.measure == "pearson":
        return _pearson_bootstrap(stat, x, counts_s, counts_j, sys_codes, src_codes)
    fast = (
        None
        if stat.pairs_within is not None
        else boot_pair_samples(
            stat.measure,
            stat.group_by,
            data.human,
            x,
            (sys_codes, src_codes),
            (counts_s, counts_j),
        )
    )
    if fast is not None:
        return fast
    out = np.empty((resamples, x.shape[1]))
    for r in range(resamples):  # outputs repeat unevenly per resample: one draw at a time
        out[r] = resample_values(
            stat, x, counts_s[r].astype(np.int64), counts_j[r].astype(np.int64)
        )
    return out


def resample_values(stat: _Stat, x: np.ndarray, cs: np.ndarray, cj: np.ndarray) -> np.ndarray:
    """(M,) the measure of every metric on one resample in which system k is drawn cs[k]
    times and source j cj[j] times (every output once per pair of draws)."""
    data = stat.data
    sys_codes, src_codes = data.system_codes(), data.source_codes()
    # The grouping's unit first, so that each drawn copy of it is a group of its own.
    outer, inner = (
        (sys_codes, src_codes) if stat.group_by == "per-system" else (src_codes, sys_codes)
    )
    c_out, c_in = (cs, cj) if stat.group_by == "per-system" else (cj, cs)
    rep = c_out[outer]
    idx = np.repeat(np.arange(data.n), rep)
    copy = np.arange(idx.size) - np.repeat(np.cumsum(rep) - rep, rep)
    rep2 = c_in[inner[idx]]
    idx2, copy2 = np.repeat(idx, rep2), np.repeat(copy, rep2)
    if idx2.size < 2:
        return np.full(x.shape[1], np.nan)
    sub = data.subset(idx2)
    if stat.group_by in ("item", "per-system"):
        groups = mm.Groups.of(outer[idx2] * (int(copy2.max()) + 1) + copy2)
        if stat.group_by == "item":
            sub.sources = np.asarray(groups.codes, dtype=object)
    else:
        groups = mm.Groups.single(idx2.size)
    within = None if stat.pairs_within is None else stat.pairs_within[idx2]
    return stat.rows(x[idx2].T, data.human[idx2], groups, data=sub, within=within)


# ---------------------------------------------------------------- Williams


def _williams(data: MetaEvalData, group_by: str) -> np.ndarray:
    from meaningbench.analysis.correlation import williams_matrix

    if group_by == "none":
        h, x = data.human, data.metrics
    elif group_by == "system":
        h, xs, _ = system_means(data.human, data.metrics.T, data.systems)
        x = xs.T
    else:
        raise UserError(
            "the Williams test compares Pearson correlations at --group-by none or system"
        )
    return np.asarray(williams_matrix(x, h, data.metric_names).to_numpy())


# ---------------------------------------------------------------- ranking


def rank_metrics(
    data: MetaEvalData,
    measure: str = "pearson",
    *,
    group_by: str = "system",
    test: str = "perm-both",
    resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    tie_threshold: float = 5.0,
    pairs_within: str | None = None,
    intervals: bool = True,
    early_stop: mp.EarlyStop | None = None,
    table: MetaEvalTable | None = None,
) -> Ranking:
    """Rank the metrics of `data` by `measure` in significance clusters at `alpha`.

    The p-value matrix comes from `test` with `resamples` seeded resamples; `intervals`
    adds each metric's 95% bootstrap interval (BOOT-BOTH percentiles). `early_stop`
    (pairs test only) stops a pair of metrics early as MTME does. `table`: what `evaluate`
    gave on the same `data`, whose values of `measure` are taken where its settings are
    these (SPA's, acc*_eq's ε search and the pairs' counts are not made twice)."""
    measure, group_by, tie_threshold = _checked_request(
        data, measure, group_by, test, resamples, alpha, tie_threshold
    )
    _check_early_stop(measure, test, early_stop)
    check_resampling(seed=seed)
    overall = _overall_values(data, measure, group_by, pairs_within, tie_threshold, seed, table)
    values = {v.metric: v.value for v in overall}
    reasons = {v.metric: v.reason for v in overall if v.reason}
    details = {v.metric: v.details for v in overall if v.details}
    names = list(data.metric_names)
    ranked = [m for m in names if values[m] is not None]
    work = data.subset(data.common(), [names.index(m) for m in ranked])
    p = np.full((len(names), len(names)), np.nan)
    draws: pd.DataFrame | None = None
    ivals: dict[str, tuple[float, float]] = {}
    if len(ranked) >= 1 and work.n >= 2:
        request = _Request(measure, group_by, test, resamples, seed, tie_threshold, early_stop)
        # Small matrix products: BLAS thread teams spinning against each other on a
        # busy machine make each one many times slower than one thread.
        with single_threaded_blas():
            stat = _Stat(work, measure, group_by, tie_threshold, work.category(pairs_within), seed)
            sub_p, samples, used = _ranked_pvalues(work, stat, request, ranked, values, details)
            if used is not None:
                draws = _draws_frame(names, ranked, used)
            if intervals and measure != "spa":  # no bootstrap for spa (see _checked_request)
                if samples is None:
                    samples = bootstrap_samples(stat, work.metrics, resamples, seed)
                ivals = _intervals(samples, ranked)
        pos = [names.index(m) for m in ranked]
        p[np.ix_(pos, pos)] = sub_p
    order = sorted(ranked, key=lambda m: -float(values[m] or 0.0))
    idx = [names.index(m) for m in order]
    clusters = dict(zip(order, assign_clusters(p[np.ix_(idx, idx)], alpha), strict=True))
    return Ranking(
        measure=measure,
        group_by=group_by,
        test=test,
        resamples=resamples,
        seed=seed,
        alpha=alpha,
        order=order,
        values=values,
        reasons=reasons,
        p_values=pd.DataFrame(p, index=names, columns=names),
        clusters=clusters,
        intervals=ivals,
        details=details,
        n_outputs=int(data.common().sum()),
        units=units_of(data, group_by),
        draws=draws,
        early_stop=early_stop,
    )


def _overall_values(
    data: MetaEvalData,
    measure: str,
    group_by: str,
    pairs_within: str | None,
    tie_threshold: float,
    seed: int,
    table: MetaEvalTable | None,
) -> list[MeasureValue]:
    """Every metric's value of `measure` on all of `data` (`group_by`: the measure's own, as
    `_checked_request` made it): `table`'s where it was made with these settings, else
    evaluated now."""
    if table is not None and (table.pairs_within, table.tie_threshold, table.seed) == (
        pairs_within,
        tie_threshold,
        seed,
    ):
        found = {
            v.metric: v
            for v in table.values
            if v.category == "" and v.measure == measure and v.group_by == group_by
        }
        if all(m in found for m in data.metric_names):
            return [found[m] for m in data.metric_names]
    made = evaluate(
        data,
        [measure],
        group_by=group_by,
        pairs_within=pairs_within,
        tie_threshold=tie_threshold,
        seed=seed,
    )
    return [v for v in made.values if v.category == ""]


def _check_early_stop(measure: str, test: str, early_stop: mp.EarlyStop | None) -> None:
    if (
        early_stop is not None
        and test != "pairs"
        and not (measure == "spa" and test in PERMUTATION_TESTS)
    ):
        raise UserError("early stopping is part of the pairs test and of SPA's permutation tests")


@dataclass(frozen=True)
class _Request:
    measure: str
    group_by: str
    test: str
    resamples: int
    seed: int
    tie_threshold: float
    early_stop: mp.EarlyStop | None


def _ranked_pvalues(
    work: MetaEvalData,
    stat: _Stat,
    r: _Request,
    ranked: list[str],
    values: dict[str, float | None],
    details: dict[str, dict[str, Any]],
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(p-values between the `ranked` metrics, the resampled statistics where the test made
    them, the resamples each pair used where a test stops early)."""
    obs = np.array([values[m] for m in ranked], dtype=np.float64)
    if r.test == "pairs":
        eps = np.array([float(details.get(m, {}).get("epsilon", 0.0)) for m in ranked])
        result = pairs_test(work, r.measure, r.group_by, eps, r.resamples, r.seed, r.early_stop)
        return result.p_values, None, result.draws
    if r.early_stop is not None:  # SPA's permutation test, stopped as MTME stops it
        used = np.zeros((len(ranked), len(ranked)), dtype=np.int64)
        z = _standardise(work.metrics)
        sub_p = permutation_pvalues(stat, z, obs, r.test, r.resamples, r.seed, r.early_stop, used)
        return sub_p, None, used
    sub_p, samples = _pvalues(stat, obs, r.test, r.resamples, r.seed)
    return sub_p, samples, None


def _draws_frame(names: list[str], ranked: list[str], used: np.ndarray) -> pd.DataFrame:
    """The resamples each pair of the `ranked` metrics used, over all `names` (0 for a
    metric without a value)."""
    full = np.zeros((len(names), len(names)), dtype=np.int64)
    pos = [names.index(m) for m in ranked]
    full[np.ix_(pos, pos)] = used
    return pd.DataFrame(full, index=names, columns=names)


def pairs_test(
    data: MetaEvalData,
    measure: str,
    group_by: str,
    epsilons: np.ndarray,
    resamples: int,
    seed: int,
    early_stop: mp.EarlyStop | None = None,
) -> mp.PairsResult:
    """MTME's pairwise permutation test of every pair of the metrics of `data` (each at
    its ε), on the pairs the measure compares at `group_by`: pairs of systems' means at
    system level, otherwise pairs of outputs of one group."""
    if group_by == "system":
        h, xs, labels = system_means(data.human, data.metrics.T, data.systems)
        groups, x = mm.Groups.single(labels.size), xs.T
    else:
        h, x, groups = data.human, data.metrics, grouping_of(data, group_by)
    tables = mp.pair_tables(h, x, groups, measure, epsilons)
    return mp.pairs_pvalues(tables, resamples, seed, early_stop)


def check_resampling(
    *,
    resamples: int | None = None,
    seed: int | None = None,
    alpha: float | None = None,
    boot: int | None = None,
) -> None:
    """The one rule for resamples (`boot`: bootstrap intervals, 0 for none), seeds and the
    significance level of every analysis command (a `UserError` naming the option);
    None: not asked."""
    if resamples is not None and not 1 <= resamples <= MAX_RESAMPLES:
        raise UserError(f"--resamples must lie between 1 and {MAX_RESAMPLES:,}, not {resamples:,}")
    if boot is not None and not 0 <= boot <= MAX_RESAMPLES:
        raise UserError(f"--boot must lie between 0 and {MAX_RESAMPLES:,}, not {boot:,}")
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise UserError(f"--seed must lie between 0 and {MAX_SEED:,}, not {seed:,}")
    if alpha is not None and not 0 < alpha < 1:
        raise UserError(f"--alpha must lie between 0 and 1, not {alpha:g}")


def _checked_request(
    data: MetaEvalData,
    measure: str,
    group_by: str,
    test: str,
    resamples: int,
    alpha: float,
    tie_threshold: float,
) -> tuple[str, str, float]:
    """The measure, grouping and tie threshold a ranking runs with; a `UserError` for a
    request that cannot be answered."""
    (measure,) = check_measures([measure])
    group_by = check_grouping(group_by)
    tie_threshold = check_tie_threshold(tie_threshold, data.scale)
    if test not in TESTS:
        raise UserError(f"unknown test {test!r}; known: {', '.join(TESTS)}")
    if measure == "spa" and test not in PERMUTATION_TESTS:
        raise UserError(
            "spa is ranked with a permutation test (perm-both, perm-items, perm-systems or "
            "perm-outputs): a resample that draws a system twice has no p-value between its "
            "copies"
        )
    system_level = group_by == "system" or measure in SYSTEM_ONLY
    if test == "perm-outputs" and system_level and measure != "spa":
        raise UserError(
            "perm-outputs swaps outputs one by one, which at system level moves every "
            "system's mean at once: use perm-both, perm-items or perm-systems there"
        )
    if test == "williams" and measure != "pearson":
        raise UserError("the Williams test compares Pearson correlations: use --measures pearson")
    if test == "pairs" and (why := mp.refusal(measure)) is not None:
        raise UserError(f"the pairs test cannot rank by {measure}: {why}")
    check_resampling(resamples=resamples, alpha=alpha)
    if measure in ITEM_PAIRS_ONLY:
        group_by = "item"
    if measure in SYSTEM_ONLY:
        group_by = "system"
    return measure, group_by, tie_threshold


def _pvalues(
    stat: _Stat, obs: np.ndarray, test: str, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """The metrics' pairwise p-values by `test`, with the bootstrap samples when the test
    drew them (the intervals reuse them)."""
    work = stat.data
    if test == "williams":
        return _williams(work, stat.group_by), None
    if test == "boot-both":
        samples = bootstrap_samples(stat, work.metrics, resamples, seed)
        return _bootstrap_pvalues(samples, obs), samples
    # Every measure, the tau-like included, sees z-scores: a positive affine map leaves
    # each metric's value alone but puts the swapped scores on one scale.
    z = _standardise(work.metrics)
    return permutation_pvalues(stat, z, obs, test, resamples, seed), None


def _intervals(samples: np.ndarray, ranked: list[str]) -> dict[str, tuple[float, float]]:
    """Each metric's 95% percentile interval over the bootstrap samples, where finite."""
    lo, hi = np.nanpercentile(samples, [2.5, 97.5], axis=0)
    return {
        m: (float(lo[k]), float(hi[k]))
        for k, m in enumerate(ranked)
        if np.isfinite(lo[k]) and np.isfinite(hi[k])
    }


def _bootstrap_pvalues(samples: np.ndarray, observed: np.ndarray) -> np.ndarray:
    m = samples.shape[1]
    out = np.full((m, m), np.nan)
    for i in range(m):
        for j in range(m):
            if i == j:
                continue
            d = samples[:, i] - samples[:, j]
            d = d[np.isfinite(d)]
            if d.size:
                obs = observed[i] - observed[j]
                out[i, j] = float(np.mean(d >= 2 * obs - 1e-12))
    return out
