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
    n_pairs = ii.size
    obs_delta = observed[ii] - observed[jj]
    tol = 1e-9 * np.maximum(1.0, np.abs(obs_delta))
    ge = np.zeros(n_pairs)
    le = np.zeros(n_pairs)
    valid = np.zeros(n_pairs)
    used = np.zeros(n_pairs, dtype=np.int64)
    active = np.ones(n_pairs, dtype=bool)
    # MTME tests "the higher metric is better": its direction decides the early stop.
    forward = obs_delta >= 0
    block = early_stop.block if early_stop else min(resamples, 100)
    rng = np.random.default_rng(seed)
    segments = _segments(tables.bounds, block)
    g_count = tables.pairs.size
    dtype = tables.feats.dtype
    done = 0
    while done < resamples and active.any():
        r = min(block, resamples - done)
        signed = np.zeros((r, g_count, tables.feats.shape[1]))
        for s0, s1, g in segments:
            bits = rng.integers(0, 2, size=(r, s1 - s0), dtype=np.int8)
            signs = (1 - 2 * bits).astype(dtype)
            signed[:, g, :] += signs @ tables.feats[s0:s1]
        done += r
        for p in np.flatnonzero(active):
            a, b = int(ii[p]), int(jj[p])
            mid = (tables.metric_sums(base, a) + tables.metric_sums(base, b)) / 2.0
            half = (tables.metric_sums(signed, a) - tables.metric_sums(signed, b)) / 2.0
            delta = tables.values(mid + half) - tables.values(mid - half)  # (r,)
            ok = np.isfinite(delta)
            big = delta >= obs_delta[p] - tol[p]
            small = delta <= obs_delta[p] + tol[p]
            ge[p] += (big & ok).sum()
            le[p] += (small & ok).sum()
            valid[p] += ok.sum()
            used[p] += r
            if early_stop is not None and r == block and valid[p] > 0:
                p_dir = (ge[p] if forward[p] else le[p]) / valid[p]
                last_large = bool(big[-1] if forward[p] else small[-1])
                if last_large and (p_dir < early_stop.low or p_dir > early_stop.high):
                    active[p] = False
    p_out = np.full((m, m), np.nan)
    draws = np.zeros((m, m), dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_out[ii, jj] = np.where(valid > 0, ge / np.maximum(valid, 1), np.nan)
        p_out[jj, ii] = np.where(valid > 0, le / np.maximum(valid, 1), np.nan)
    draws[ii, jj] = used
    draws[jj, ii] = used
    return PairsResult(p_out, draws, observed)
