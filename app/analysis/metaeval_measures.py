"""Meta-evaluation measures: how well one metric's scores agree with the human scores.

One rule per measure, named as the literature names it, vectorised over rows: every
function takes the human scores `h` of n outputs ((n,) or (B, n)) and B rows of metric
scores `x` ((B, n): B metrics, or B resamples of one metric) and returns B values, NaN
where the measure is not defined on that row. Callers turn NaN into a named reason
(`meaningbench.analysis.metaeval`); nothing here raises on degenerate data.

Grouping (Deutsch et al. 2021; MTME's `average_by`):
- none: one value over every output ("global");
- item: the value over the outputs of each source, averaged over sources ("input level";
  pairwise measures count only pairs of outputs of one source);
- system: the value over per-system mean scores ("system level");
- per-system: the value over each system's outputs, averaged over systems (MTME's 'sys').

Pairwise counts follow Deutsch et al. 2023 ("Ties matter"): C concordant, D discordant,
Th pairs tied only in the humans, Tm tied only in the metric, Thm tied in both.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

PAIR_CHUNK = 2_000_000  # pairs per block: bounds memory on a 10,000-output global grouping


@dataclass(frozen=True)
class Groups:
    """Which outputs are compared with which: integer group code per output (one group
    for 'none'); `codes` is (n,) and `n_groups` the number of codes."""

    codes: np.ndarray
    n_groups: int

    @classmethod
    def single(cls, n: int) -> Groups:
        return cls(np.zeros(n, dtype=np.intp), 1)

    @classmethod
    def of(cls, codes: np.ndarray) -> Groups:
        _, inv = np.unique(np.asarray(codes), return_inverse=True)
        inv = inv.astype(np.intp)
        return cls(inv, int(inv.max()) + 1 if inv.size else 0)

    def members(self) -> list[np.ndarray]:
        order = np.argsort(self.codes, kind="stable")
        bounds = np.searchsorted(self.codes[order], np.arange(self.n_groups + 1))
        return [order[bounds[g] : bounds[g + 1]] for g in range(self.n_groups)]


@functools.lru_cache(maxsize=256)
def _upper_pairs(k: int) -> tuple[np.ndarray, np.ndarray]:
    """`np.triu_indices(k, 1)`, kept: groups of one size recur in every resample."""
    a, b = np.triu_indices(k, 1)
    a.flags.writeable = False
    b.flags.writeable = False
    return a, b


def iter_pairs(groups: Groups, chunk: int = PAIR_CHUNK) -> Iterator[tuple[np.ndarray, ...]]:
    """(i, j, group) index arrays of every unordered pair of outputs within one group,
    in blocks of about `chunk` pairs."""
    buf_i: list[np.ndarray] = []
    buf_j: list[np.ndarray] = []
    buf_g: list[np.ndarray] = []
    size = 0
    for g, idx in enumerate(groups.members()):
        k = idx.size
        if k < 2:
            continue
        rows_per_block = max(1, chunk // max(k, 1))
        for r0 in range(0, k - 1, rows_per_block):
            r1 = min(k - 1, r0 + rows_per_block)
            a, b = _upper_pairs(k)
            if r0 or r1 < k - 1:
                keep = (a >= r0) & (a < r1)
                a, b = a[keep], b[keep]
            buf_i.append(idx[a])
            buf_j.append(idx[b])
            buf_g.append(np.full(a.size, g, dtype=np.intp))
            size += a.size
            if size >= chunk:
                yield np.concatenate(buf_i), np.concatenate(buf_j), np.concatenate(buf_g)
                buf_i, buf_j, buf_g, size = [], [], [], 0
    if size:
        yield np.concatenate(buf_i), np.concatenate(buf_j), np.concatenate(buf_g)


def _rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x[None, :] if x.ndim == 1 else x


def _group_sum(values: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Sum over the last axis by group: (B, n) → (B, G)."""
    v = _rows(values)
    b = v.shape[0]
    if n_groups == 1:
        return np.asarray(v.sum(axis=1, keepdims=True))
    flat = (np.arange(b)[:, None] * n_groups + codes[None, :]).ravel()
    return np.bincount(flat, weights=v.ravel(), minlength=b * n_groups).reshape(b, n_groups)


def _macro(per_group: np.ndarray) -> np.ndarray:
    """Average over groups where the value is defined (NaN where none is)."""
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(per_group)
        n = ok.sum(axis=1)
        total = np.where(ok, per_group, 0.0).sum(axis=1)
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


# ---------------------------------------------------------------- correlations

SPREAD_TOLERANCE = 1e-12  # below this share of the raw sum of squares, scores are constant


def has_spread(centred_ss: np.ndarray, raw_ss: np.ndarray) -> np.ndarray:
    """Whether scores vary, from their centred and raw (uncentred) sums of squares.

    Relative, so that the unit of the scores does not matter (×1e-7 and ×1e7 are alike);
    the tolerance sits far above the rounding of either way of computing the centred sum.
    """
    return np.asarray(np.asarray(centred_ss) > SPREAD_TOLERANCE * np.maximum(raw_ss, 1e-300))


def pearson(h: np.ndarray, x: np.ndarray, groups: Groups) -> np.ndarray:
    """Pearson r per group, averaged over the groups where it is defined."""
    x = _rows(x)
    hh = np.broadcast_to(_rows(h), x.shape)
    codes, g = groups.codes, groups.n_groups
    n = np.bincount(codes, minlength=g).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = _group_sum(x, codes, g) / n
        mh = _group_sum(hh, codes, g) / n
        dx = x - mx[:, codes]
        dh = hh - mh[:, codes]
        sxy = _group_sum(dx * dh, codes, g)
        sxx = _group_sum(dx * dx, codes, g)
        shh = _group_sum(dh * dh, codes, g)
        ok = (
            has_spread(sxx, _group_sum(x * x, codes, g))
            & has_spread(shh, _group_sum(hh * hh, codes, g))
            & (n >= 2)
        )
        r = np.where(ok, sxy / np.sqrt(sxx * shh), np.nan)
    return _macro(np.clip(r, -1.0, 1.0))


def _group_ranks(v: np.ndarray, groups: Groups) -> np.ndarray:
    v = _rows(v)
    if groups.n_groups == 1:
        return np.asarray(rankdata(v, axis=1))
    out = np.empty_like(v)
    for idx in groups.members():
        if idx.size:
            out[:, idx] = rankdata(v[:, idx], axis=1)
    return out


def spearman(h: np.ndarray, x: np.ndarray, groups: Groups) -> np.ndarray:
    """Pearson r of the average ranks within each group."""
    return pearson(_group_ranks(h, groups), _group_ranks(x, groups), groups)


# ---------------------------------------------------------------- pairwise counts


@dataclass
class PairCounts:
    """Per row and group: concordant, discordant, tied only in humans (th), only in the
    metric (tm), in both (thm); arrays of shape (B, G)."""

    c: np.ndarray
    d: np.ndarray
    th: np.ndarray
    tm: np.ndarray
    thm: np.ndarray

    @property
    def total(self) -> np.ndarray:
        return np.asarray(self.c + self.d + self.th + self.tm + self.thm)


def pair_counts(h: np.ndarray, x: np.ndarray, groups: Groups, epsilon: float = 0.0) -> PairCounts:
    """Pairs of one group; a metric difference of at most `epsilon` is a metric tie."""
    x = _rows(x)
    hh = _rows(h)
    b, g = x.shape[0], groups.n_groups
    acc = {k: np.zeros((b, g)) for k in ("c", "d", "th", "tm", "thm")}
    for i, j, gid in iter_pairs(groups):
        dh = hh[:, i] - hh[:, j]
        dx = x[:, i] - x[:, j]
        ht = dh == 0
        mt = np.abs(dx) <= epsilon
        agree = (np.sign(dh) == np.sign(dx)) & ~ht & ~mt
        parts = {
            "c": agree,
            "d": ~ht & ~mt & ~agree,
            "th": ht & ~mt,
            "tm": mt & ~ht,
            "thm": ht & mt,
        }
        for key, mask in parts.items():
            m = np.broadcast_to(mask, (b, mask.shape[-1])).astype(np.float64)
            acc[key] += _group_sum(m, gid, g)
    return PairCounts(**acc)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def tau_a(h: np.ndarray, x: np.ndarray, groups: Groups) -> np.ndarray:
    """Kendall's τ_a = (C − D) / all pairs."""
    return from_counts("tau_a", pair_counts(h, x, groups))


def kendall_b(h: np.ndarray, x: np.ndarray, groups: Groups) -> np.ndarray:
    """Kendall's τ_b = (C − D) / √((C + D + Th)(C + D + Tm)); undefined when either side
    is all ties."""
    return from_counts("kendall_b", pair_counts(h, x, groups))


COUNT_MEASURES = ("tau_a", "kendall_b", "tau_23", "acc_eq")


def from_counts(measure: str, k: PairCounts) -> np.ndarray:
    """A measure of COUNT_MEASURES from its per-group pair counts, macro-averaged."""
    return _macro(group_values(measure, k))


def group_values(measure: str, k: PairCounts) -> np.ndarray:
    """A measure of COUNT_MEASURES in each group (NaN where not defined there)."""
    if measure == "tau_a":
        return _ratio(k.c - k.d, k.total)
    if measure == "kendall_b":
        return _ratio(k.c - k.d, np.sqrt((k.c + k.d + k.th) * (k.c + k.d + k.tm)))
    if measure == "tau_23":
        return _ratio(k.c + k.thm - k.d - k.th - k.tm, k.total)
    if measure == "acc_eq":
        return _ratio(k.c + k.thm, k.total)
    raise ValueError(measure)


def _distinct_per_group(v: np.ndarray, groups: Groups) -> np.ndarray:
    v = _rows(v)
    out = np.zeros((v.shape[0], groups.n_groups))
    for g, idx in enumerate(groups.members()):
        if idx.size:
            s = np.sort(v[:, idx], axis=1)
            out[:, g] = 1 + (np.diff(s, axis=1) != 0).sum(axis=1)
    return out


def kendall_c(h: np.ndarray, x: np.ndarray, groups: Groups) -> np.ndarray:
    """Stuart's τ_c = 2(C − D) / (n² (m − 1) / m), m = the smaller number of distinct
    values on either side (scipy's definition)."""
    x = _rows(x)
    k = pair_counts(h, x, groups)
    n = np.bincount(groups.codes, minlength=groups.n_groups).astype(np.float64)
    m = np.minimum(
        _distinct_per_group(x, groups),
        np.broadcast_to(_distinct_per_group(h, groups), (x.shape[0], groups.n_groups)),
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.where(m > 1, n**2 * (m - 1) / m, 0.0)
    return _macro(_ratio(2 * (k.c - k.d), den))


def tau_23(h: np.ndarray, x: np.ndarray, groups: Groups) -> np.ndarray:
    """WMT23's τ: (C + Thm − D − Th − Tm) / all pairs (ties count, for or against)."""
    return from_counts("tau_23", pair_counts(h, x, groups))


def acc_eq(h: np.ndarray, x: np.ndarray, groups: Groups, epsilon: float = 0.0) -> np.ndarray:
    """Pairwise accuracy with ties: (C + Thm) / all pairs; metric ties at |Δ| ≤ epsilon."""
    return from_counts("acc_eq", pair_counts(h, x, groups, epsilon))


@dataclass
class TieCalibration:
    """acc*_eq per row: the best accuracy, the ε that gives it, how many candidate
    thresholds were tried, and whether ε was searched on a sample of the pairs."""

    value: np.ndarray
    epsilon: np.ndarray
    candidates: np.ndarray
    sampled_pairs: int = 0  # 0: every pair


CALIBRATION_PAIRS = 2_000_000  # above this many pairs, ε is searched on a seeded sample


def _calibration_pairs(groups: Groups, seed: int) -> tuple[np.ndarray, ...]:
    """(i, j, group, sampled) of the pairs the ε search looks at: every pair, or a
    seeded sample of CALIBRATION_PAIRS drawn uniformly among all pairs."""
    sizes = np.bincount(groups.codes, minlength=groups.n_groups)
    per_group = sizes * (sizes - 1) // 2
    total = int(per_group.sum())
    if total <= CALIBRATION_PAIRS:
        pairs = list(iter_pairs(groups))
        if not pairs:
            empty = np.zeros(0, dtype=np.intp)
            return empty, empty, empty, np.zeros(1)
        return (*(np.concatenate([p[k] for p in pairs]) for k in range(3)), np.zeros(1))
    rng = np.random.default_rng(seed)
    g = rng.choice(groups.n_groups, size=CALIBRATION_PAIRS, p=per_group / total)
    k = sizes[g]
    a = rng.integers(0, k)
    b = rng.integers(0, k - 1)
    b = b + (b >= a)
    order = np.argsort(groups.codes, kind="stable")
    start = np.searchsorted(groups.codes[order], np.arange(groups.n_groups))
    return order[start[g] + a], order[start[g] + b], g, np.ones(1)


def acc_eq_star(h: np.ndarray, x: np.ndarray, groups: Groups, seed: int = 0) -> TieCalibration:
    """Tie-calibrated pairwise accuracy (Deutsch et al. 2023): the ε that maximises
    acc_eq, one ε for every group of the row (the groups' accuracies averaged).

    Candidates: ε = 0 and every distinct |metric difference| of a compared pair (an ε
    between two of them gives the same ties as the lower one). The smallest best ε wins.
    Above CALIBRATION_PAIRS pairs the search runs on a seeded uniform sample of pairs
    and the accuracy at the chosen ε is then counted on every pair. Not defined (NaN)
    when the humans tie every compared pair.
    """
    x = _rows(x)
    hh = _rows(h)
    b = x.shape[0]
    i, j, gid, sampled = _calibration_pairs(groups, seed)
    if i.size == 0:
        nan = np.full(b, np.nan)
        return TieCalibration(nan, nan, np.zeros(b))
    per_group = np.bincount(gid, minlength=groups.n_groups).astype(np.float64)
    used = per_group > 0
    weight = 1.0 / (per_group[gid] * used.sum())  # macro average over groups with pairs
    value = np.empty(b)
    eps = np.empty(b)
    cands = np.empty(b)
    for r in range(b):
        hr = hh[r if hh.shape[0] > 1 else 0]
        dh = hr[i] - hr[j]
        if not dh.any():  # humans tie every pair: any ε that ties every pair would score 1
            value[r], eps[r], cands[r] = np.nan, np.nan, 0
            continue
        dx = x[r, i] - x[r, j]
        ad = np.abs(dx)
        order = np.argsort(ad, kind="stable")
        ad_s = ad[order]
        tie_ok = np.where(dh[order] == 0, weight[order], 0.0)
        ord_ok = np.where(
            (dh[order] != 0) & (np.sign(dh[order]) == np.sign(dx[order])), weight[order], 0.0
        )
        # At candidate ε = ad_s[k] (last index of its run), pairs 0..k are metric ties.
        last = np.r_[ad_s[1:] != ad_s[:-1], True]
        acc_k = np.cumsum(tie_ok)[last] + ord_ok.sum() - np.cumsum(ord_ok)[last]
        eps_k = ad_s[last]
        if eps_k[0] > 0:  # ε = 0 with no exact ties: plain ordering accuracy
            acc_k = np.r_[ord_ok.sum(), acc_k]
            eps_k = np.r_[0.0, eps_k]
        top = acc_k.max()
        best = int(np.flatnonzero(acc_k >= top - 1e-12)[0])
        value[r], eps[r], cands[r] = acc_k[best], eps_k[best], eps_k.size
        if sampled[0]:
            value[r] = acc_eq(hr, x[r], groups, epsilon=float(eps[r]))[0]
    return TieCalibration(value, eps, cands, int(i.size) if sampled[0] else 0)


def pdp(h: np.ndarray, x: np.ndarray, groups: Groups) -> np.ndarray:
    """Pairwise-difference Pearson: the correlation of the human and the metric
    differences over every compared pair, pooled over groups (both orders of a pair
    counted, so the differences have mean zero)."""
    x = _rows(x)
    hh = _rows(h)
    b = x.shape[0]
    sxy, sxx, shh = np.zeros(b), np.zeros(b), np.zeros(b)
    for i, j, _ in iter_pairs(groups):
        dh = hh[:, i] - hh[:, j]
        dx = x[:, i] - x[:, j]
        sxy += (dh * dx).sum(axis=1)
        sxx += (dx * dx).sum(axis=1)
        shh += np.broadcast_to((dh * dh).sum(axis=1), (b,))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((sxx > 0) & (shh > 0), sxy / np.sqrt(sxx * shh), np.nan)


# ---------------------------------------------------------------- soft pairwise accuracy


def permutation_signs(seed: int, n_resamples: int, n_units: int) -> np.ndarray:
    """±1 per resample and unit. Drawn as Thompson et al.'s published SPA code draws them
    (uniform float32, above one half = +1), so one seed gives their numbers."""
    u = np.random.default_rng(seed).random((n_resamples, n_units), dtype=np.float32)
    return np.where(u > 0.5, 1.0, -1.0)


def pairwise_system_pvalues(matrix: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """(S, S) one-sided p-values of "system i is better than system j" from a paired
    permutation test over sources; `matrix` is (S, N) scores of S systems on N sources,
    `signs` (R, N). Upper triangle filled, the rest NaN."""
    s = matrix.shape[0]
    p = np.full((s, s), np.nan)
    p[np.triu_indices(s, 1)] = system_pair_hits(matrix, signs) / signs.shape[0]
    return p


def system_pair_hits(matrix: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """(S(S − 1)/2,) for each pair of systems a < b (`np.triu_indices` order), how many
    of the sign rows keep Σ sign·(score a − score b) at least the observed difference."""
    s = matrix.shape[0]
    totals = matrix.sum(axis=1)
    null = np.ascontiguousarray((signs @ matrix.T).T)  # (S, R): Σ sign·score per system
    out = []
    for a in range(s - 1):  # one row of system pairs at a time: no gathered copies
        observed = totals[a] - totals[a + 1 :]
        hits = null[a] - null[a + 1 :] >= (observed - 1e-9 * np.abs(observed))[:, None]
        out.append(np.count_nonzero(hits, axis=1))
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def spa(human: np.ndarray, metric: np.ndarray, signs: np.ndarray) -> float:
    """Soft pairwise accuracy (Thompson et al. 2024): 1 − mean |p_human − p_metric| over
    system pairs; `human` and `metric` are (S, N) matrices of one metric's scores."""
    return spa_from_pvalues(pairwise_system_pvalues(human, signs), metric, signs)


SPA_CELLS = 2_000_000  # resampled matrices × systems × flips per block of `spa_rows`


def spa_rows(human_p: np.ndarray, metrics: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """(B,) SPA of B metric matrices `metrics` (B, S, N) against the human p-values,
    as `spa_from_pvalues` gives them one at a time: every matrix's null sums come from one
    matrix product per block, and a compiled loop counts each pair's hits. Blocks run on
    the analysis threads (the product and the loop release the GIL)."""
    from meaningbench.analysis.metaeval_swap_kernels import spa_hits
    from meaningbench.analysis.parallel import n_workers, thread_map

    b, s, n = metrics.shape
    upper = human_p[np.triu_indices(s, 1)]
    step = max(1, min(SPA_CELLS // max(1, s * signs.shape[0]), -(-b // n_workers())))

    def block(r0: int) -> np.ndarray:
        m = metrics[r0 : r0 + step]
        null = (m.reshape(-1, n) @ signs.T).reshape(m.shape[0], s, -1)
        pm = spa_hits(null, m.sum(axis=2)) / signs.shape[0]
        return np.asarray(1.0 - np.mean(np.abs(upper - pm), axis=1))

    return np.concatenate(thread_map(block, range(0, b, step)))


def spa_from_pvalues(human_p: np.ndarray, metric: np.ndarray, signs: np.ndarray) -> float:
    """SPA given the human p-values already (`human_p`, (S, S) upper triangle)."""
    pm = pairwise_system_pvalues(metric, signs)
    upper = np.triu_indices(human_p.shape[0], 1)
    return float(1.0 - np.mean(np.abs(human_p - pm)[upper]))


# ---------------------------------------------------------------- LENS / SimpEval tau-like


@dataclass
class TauLike:
    """Per metric row: τ, concordant and discordant counts; and how many pairs of outputs
    of one source were looked at."""

    tau: np.ndarray
    concordant: np.ndarray
    discordant: np.ndarray
    pairs_considered: int


def tau_like(
    raters: np.ndarray,
    metric: np.ndarray,
    sources: np.ndarray,
    *,
    threshold: float = 5.0,
    within: np.ndarray | None = None,
) -> TauLike:
    """Kendall tau-like from raw per-rater ratings (Maddela et al. 2023, LENS/SimpEval).

    `raters` is (n, R): rater r's rating of output i, NaN where r did not rate it;
    `metric` is (n,) or (B, n). Two outputs are compared when they share a source (and
    the `within` category when given). Each rater who rated both votes sign(h1 − h2), or
    a tie when |h1 − h2| ≤ threshold. A pair counts when a strict majority of its voters
    agree on a non-zero sign; it is concordant when the metric's difference has that
    sign, otherwise (a metric tie included) discordant. τ = (C − D) / (C + D).
    """
    x = _rows(metric)
    key = np.array([str(s) for s in np.asarray(sources, dtype=object)])
    if within is not None:
        key = np.char.add(np.char.add(key, "\0"), np.asarray(within).astype(str))
    groups = Groups.of(key)
    c = np.zeros(x.shape[0])
    d = np.zeros(x.shape[0])
    considered = 0
    for i, j, _ in iter_pairs(groups):
        a, b = raters[i], raters[j]
        both = np.isfinite(a) & np.isfinite(b)
        diff = np.where(both, a - b, 0.0)
        vote = np.where(np.abs(diff) <= threshold, 0.0, np.sign(diff))
        voters = both.sum(axis=1)
        plus = ((vote > 0) & both).sum(axis=1)
        minus = ((vote < 0) & both).sum(axis=1)
        majority = np.where(2 * plus > voters, 1.0, np.where(2 * minus > voters, -1.0, 0.0))
        counted = majority != 0
        msign = np.sign(x[:, i[counted]] - x[:, j[counted]])
        conc = (msign == majority[counted]).sum(axis=1)
        c += conc
        d += counted.sum() - conc
        considered += int(i.size)
    return TauLike(_ratio(c - d, c + d), c, d, considered)
