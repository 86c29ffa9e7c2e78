"""The pairwise permutation test of two Kendall-type measures (MTME's
`PairwisePermutationSigDiff`, the segment-level test of the WMT24 and WMT25 metrics tasks).

Each metric first turns every compared pair of outputs (two outputs of one group) into an
outcome: concordant, discordant, tied in the humans only, in the metric only, or in both,
the metric's tie at its own ε (acc*_eq's calibrated ε, 0 for the other measures). A
resample swaps the two metrics' *outcomes* of each pair with probability ½, not their
scores, so a metric keeps its own ε and no resample searches ε again.

A measure is a function of per-group sums of one or two features of the outcomes
(`FEATURES`): acc_eq counts the pairs the metric gets right (C + Thm), τ_b needs C − D and
the pairs the metric does not tie. After swapping, a group's sum for metric A is
(F_A + F_B)/2 + (T_A − T_B)/2 and for metric B (F_A + F_B)/2 − (T_A − T_B)/2, where
F is the plain sum and T = Σ s·f the sum signed by the draw (s = +1 kept, −1 swapped). So
each block of draws costs one matrix product per group for all metrics together, and every
pair of metrics is a difference of two of those: only pairs on which the two metrics'
outcomes differ move the difference. One seeded matrix of draws serves every pair of
metrics.

Early stopping follows MTME's code: draws come in blocks of `block` (100 in the WMT
tasks); at the end of a block the pair stops when p < `low` (0.02) or p > `high` (0.50),
where p is that of "the metric with the higher value is better" and, as MTME's
`PairwisePermutationSigDiff` checks it, only when the block's last draw reached the
observed difference. Draws are made block by block from one generator, so a pair that
stopped early saw exactly the first draws of the no-early-stop run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from meaningbench.analysis import metaeval_measures as mm

# Measures that are functions of the outcomes of pairs of outputs (the test's domain).
PAIRS_MEASURES = ("kendall_b", "tau_a", "tau_23", "acc_eq", "acc_eq_star")
# Why the test refuses the others.
PAIRS_REFUSED = {
    "kendall_c": "τ_c also depends on how many distinct scores the metric gives, not only on "
    "the outcomes of pairs, so it is not defined once pair outcomes are swapped (MTME "
    "refuses it for the same reason)",
    "tau_like": "the tau-like counts rater-majority votes, not outcomes of pairs of scores; "
    "use perm-both or boot-both",
}
FEATURES = {"kendall_b": 2, "tau_a": 1, "tau_23": 1, "acc_eq": 1, "acc_eq_star": 1}
DRAW_CELLS = 4_000_000  # draws × pairs per matrix product: bounds memory on big groups
EXACT_FLOAT32 = 2**24  # below this many pairs per group, float32 sums of ±1 are exact


def refusal(measure: str) -> str | None:
    """Why the pairs test cannot rank by `measure` (None: it can)."""
    if measure in PAIRS_MEASURES:
        return None
    return PAIRS_REFUSED.get(
        measure,
        f"{measure} is not a count of outcomes of pairs of outputs; the pairs test is "
        f"defined for {', '.join(PAIRS_MEASURES)}",
    )


@dataclass(frozen=True)
class EarlyStop:
    """MTME's early stopping (`PermutationSigDiffParams` as the WMT tasks set it)."""

    block: int = 100
    low: float = 0.02
    high: float = 0.50


@dataclass
class PairTables:
    """The outcome features of every compared pair for every metric.

    `feats` is (P, F·M): feature k of metric m in column k·M + m; pairs of one group are
    contiguous, group g's from `bounds[g]` to `bounds[g + 1]`. `pairs` (G,) counts each
    group's pairs and `human_untied` (G,) its pairs the humans do not tie (τ_b's
    denominator)."""

    measure: str
    feats: np.ndarray
    bounds: np.ndarray
    pairs: np.ndarray
    human_untied: np.ndarray
    n_metrics: int

    @property
    def n_features(self) -> int:
        return FEATURES[self.measure]

    def sums(self) -> np.ndarray:
        """(G, F·M) plain per-group sums (no swap)."""
        cums = np.vstack([np.zeros((1, self.feats.shape[1])), np.cumsum(self.feats, axis=0)])
        return np.asarray(np.diff(cums[self.bounds], axis=0))

    def values(self, sums: np.ndarray) -> np.ndarray:
        """The measure from per-group sums (..., G, F) of one metric: (...,)."""
        tot = self.pairs.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.measure in ("acc_eq", "acc_eq_star", "tau_a"):
                per_group = sums[..., 0] / tot
            elif self.measure == "tau_23":
                per_group = (2.0 * sums[..., 0] - tot) / tot
            else:  # kendall_b: (C − D) / √((C + D + Th)(C + D + Tm))
                den = sums[..., 1] * self.human_untied
                per_group = np.where(den > 0, sums[..., 0] / np.sqrt(den), np.nan)
            per_group = np.where(tot > 0, per_group, np.nan)
        flat = per_group.reshape(-1, per_group.shape[-1])
        return np.asarray(mm._macro(flat).reshape(per_group.shape[:-1]))

    def linear_weights(self) -> np.ndarray | None:
        """(G,) w with values(mid + half) − values(mid − half) = Σ_g w_g · 2·half_g, where
        the measure is linear in its one feature (None for τ_b): a pair's difference on a
        draw is then each metric's weighted sum less the other's, not two values of hybrids.
        Groups without pairs weigh 0: `values` leaves them out."""
        tot = self.pairs.astype(np.float64)
        defined = tot > 0
        if self.measure == "kendall_b" or not defined.any():  # no group: NaN, as `values`
            return None
        scale = 2.0 if self.measure == "tau_23" else 1.0  # τ_23 per group: (2·sum − tot)/tot
        w = np.zeros(tot.size)
        w[defined] = scale / (tot[defined] * max(int(defined.sum()), 1))
        return w

    def metric_sums(self, sums: np.ndarray, m: int) -> np.ndarray:
        """(..., G, F) metric m's columns of (..., G, F·M) sums."""
        cols = [k * self.n_metrics + m for k in range(self.n_features)]
        return sums[..., cols]


def pair_tables(
    h: np.ndarray, x: np.ndarray, groups: mm.Groups, measure: str, epsilons: np.ndarray
) -> PairTables:
    """Outcome features of every pair of one group, for the M metric columns of `x`
    ((n, M) raw scores; metric m ties a pair when its |difference| ≤ epsilons[m])."""
    m = x.shape[1]
    f = FEATURES[measure]
    parts: list[np.ndarray] = []
    gids: list[np.ndarray] = []
    human_untied = np.zeros(groups.n_groups)
    for i, j, gid in mm.iter_pairs(groups):
        dh = h[i] - h[j]
        dx = x[i] - x[j]  # (P, M)
        ht = (dh == 0)[:, None]
        mt = np.abs(dx) <= epsilons[None, :]
        agree = ~ht & ~mt & (np.sign(dh)[:, None] == np.sign(dx))
        if measure in ("acc_eq", "acc_eq_star", "tau_23"):
            cols = [agree | (ht & mt)]
        else:
            disagree = ~ht & ~mt & ~agree
            cols = [agree.astype(np.int8) - disagree.astype(np.int8)]
            if measure == "kendall_b":
                cols.append(~mt)
        parts.append(np.concatenate([c.astype(np.float32) for c in cols], axis=1))
        gids.append(gid)
        human_untied += np.bincount(gid, weights=(dh != 0), minlength=groups.n_groups)
    feats = np.concatenate(parts) if parts else np.zeros((0, f * m), dtype=np.float32)
    gid_all = np.concatenate(gids) if gids else np.zeros(0, dtype=np.intp)
    pairs = np.bincount(gid_all, minlength=groups.n_groups)
    if pairs.size and pairs.max() >= EXACT_FLOAT32:
        feats = feats.astype(np.float64)
    bounds = np.r_[0, np.cumsum(pairs)]
    return PairTables(measure, feats, bounds, pairs, human_untied, m)


def _segments(bounds: np.ndarray, draws: int) -> list[tuple[int, int, int]]:
    """(start, end, group) slices of the pairs, each in one group and small enough that a
    block of draws over it stays under DRAW_CELLS."""
    width = max(1, DRAW_CELLS // max(draws, 1))
    out = []
    for g in range(bounds.size - 1):
        for s in range(int(bounds[g]), int(bounds[g + 1]), width):
            out.append((s, min(int(bounds[g + 1]), s + width), g))
    return out


@dataclass
class PairsResult:
    """(M, M) p-values of "row metric better than column metric", the draws each pair of
    metrics used, and the observed values the test computed from its tables."""

    p_values: np.ndarray
    draws: np.ndarray
    observed: np.ndarray


def pairs_pvalues(
    tables: PairTables,
    resamples: int,
    seed: int,
    early_stop: EarlyStop | None = None,
) -> PairsResult:
    """The pairwise permutation test for every pair of metrics, on one shared draw."""
    m = tables.n_metrics
    base = tables.sums()  # (G, F·M)
    observed = np.array([tables.values(tables.metric_sums(base, k)) for k in range(m)])
    ii, jj = np.triu_indices(m, 1)
    count = _Counts(observed[ii] - observed[jj], early_stop)
    weights = tables.linear_weights()
    block = early_stop.block if early_stop else min(resamples, 100)
    rng = np.random.default_rng(seed)
    segments = _segments(tables.bounds, block)
    done = 0
    while done < resamples and count.active.any():
        r = min(block, resamples - done)
        signed = np.zeros((r, tables.pairs.size, tables.feats.shape[1]))
        for s0, s1, g in segments:
            bits = rng.integers(0, 2, size=(r, s1 - s0), dtype=np.int8)
            signs = (1 - 2 * bits).astype(tables.feats.dtype)
            signed[:, g, :] += signs @ tables.feats[s0:s1]
        done += r
        on = np.flatnonzero(count.active)
        if weights is not None:  # linear: each metric's share once, a pair a difference
            share = np.einsum("rgm,g->rm", signed, weights)
            delta = share[:, ii[on]] - share[:, jj[on]]
        else:
            delta = np.column_stack([_delta(tables, base, signed, ii[p], jj[p]) for p in on])
        count.add(on, delta, r == block)
    return count.result(m, ii, jj, observed)


def _delta(tables: PairTables, base: np.ndarray, signed: np.ndarray, a: int, b: int) -> np.ndarray:
    """(r,) hybrid A's value less hybrid B's for metrics a and b on r draws' signed sums."""
    mid = (tables.metric_sums(base, a) + tables.metric_sums(base, b)) / 2.0
    half = (tables.metric_sums(signed, a) - tables.metric_sums(signed, b)) / 2.0
    return np.asarray(tables.values(mid + half) - tables.values(mid - half))


class _Counts:
    """Each pair's draws at least (and at most) its observed difference, MTME's early stop
    decided for all pairs of a block at once."""

    def __init__(self, obs_delta: np.ndarray, early_stop: EarlyStop | None) -> None:
        n = obs_delta.size
        self.obs, self.early_stop = obs_delta, early_stop
        self.tol = 1e-9 * np.maximum(1.0, np.abs(obs_delta))
        self.ge, self.le, self.valid = np.zeros(n), np.zeros(n), np.zeros(n)
        self.used = np.zeros(n, dtype=np.int64)
        self.active = np.ones(n, dtype=bool)
        # MTME tests "the higher metric is better": its direction decides the early stop.
        self.forward = obs_delta >= 0

    def add(self, on: np.ndarray, delta: np.ndarray, whole_block: bool) -> None:
        """Count (r, len(on)) differences of the pairs `on`."""
        ok = np.isfinite(delta)
        big = delta >= (self.obs - self.tol)[on]
        small = delta <= (self.obs + self.tol)[on]
        self.ge[on] += (big & ok).sum(axis=0)
        self.le[on] += (small & ok).sum(axis=0)
        self.valid[on] += ok.sum(axis=0)
        self.used[on] += delta.shape[0]
        stop = self.early_stop
        if stop is None or not whole_block:
            return
        fwd, valid = self.forward[on], self.valid[on]
        with np.errstate(invalid="ignore", divide="ignore"):
            p_dir = np.where(fwd, self.ge[on], self.le[on]) / valid
        last_large = np.where(fwd, big[-1], small[-1])
        ends = (valid > 0) & last_large & ((p_dir < stop.low) | (p_dir > stop.high))
        self.active[on[ends]] = False

    def result(self, m: int, ii: np.ndarray, jj: np.ndarray, observed: np.ndarray) -> PairsResult:
        p_out = np.full((m, m), np.nan)
        draws = np.zeros((m, m), dtype=np.int64)
        valid = self.valid
        with np.errstate(invalid="ignore", divide="ignore"):
            p_out[ii, jj] = np.where(valid > 0, self.ge / np.maximum(valid, 1), np.nan)
            p_out[jj, ii] = np.where(valid > 0, self.le / np.maximum(valid, 1), np.nan)
        draws[ii, jj] = self.used
        draws[jj, ii] = self.used
        return PairsResult(p_out, draws, observed)
