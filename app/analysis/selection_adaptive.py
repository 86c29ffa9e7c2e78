"""Adaptive top-up: the next round's items chosen from the ratings already collected.

A campaign runs in rounds of kits. Within a round every queue is fixed before anyone
rates (score-based, system-balanced or random: `meaningbench.annotation.selection`), so
no rater's answers steer another rater's queue while the round runs. Between rounds, the
lead may choose the next round's items where the ranking is least settled by the ratings
collected so far:

- ranking **metrics** (their Pearson r with the humans): the rated items are resampled
  (bootstrap) and each pair of metrics weighs 1 − |2p − 1|, p the share of resamples in
  which the first correlates better (1: a coin flip, 0: settled). An unrated item's
  utility is the weighted size of its first-order effect on each pair's difference of r
  (the change in r of adding one point at the item's standardised metric scores and its
  human score), averaged over human scores drawn at fixed quantiles around the score a
  least-squares fit of the rated items predicts from the metrics: the item's own human
  score is not known until it is rated.
- ranking **systems** (their mean human score): each pair of systems weighs the two-sided
  p-value of the difference of their means (1: the intervals overlap fully); one more item
  of a system shrinks the variance of its mean by var / (n (n + 1)). The round is filled
  greedily: each pick takes the next item (in the first round's order) of the system whose
  extra item most reduces the weighted uncertainty, then updates that system's count. A
  system not yet rated twice comes first.

The first round is always the base order (a score-based strategy or random): nothing has
been rated yet. Ties fall to the base order. The functions are pure: the simulation
replays them on a study's existing ratings (`simulate --rounds`), and `kit --top-up
--adaptive` runs them on the ratings collected.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import norm

TARGETS = ("metrics", "systems")
# The campaign's budget in the replay: the field's largest budget (half of the items),
# spent in equal rounds.
CAMPAIGN_SHARE = 0.5
RESAMPLES = 200
# Human scores at these normal quantiles around the predicted score (deterministic).
QUANTILES = norm.ppf((np.arange(8) + 0.5) / 8)
MIN_RATED = 3
# Suffix of a strategy's row when it is topped up adaptively (`simulate --rounds`).
SUFFIX = "+top-up"


def _z(values: np.ndarray, rated: np.ndarray) -> np.ndarray:
    """Columns standardised by the rated rows' mean and SD (constant: 0)."""
    mean = values[rated].mean(axis=0)
    sd = values[rated].std(axis=0)
    return np.asarray((values - mean) / np.where(sd > 0, sd, 1.0))


def pair_weights(human: np.ndarray, metrics: np.ndarray, seed: int = 0) -> np.ndarray:
    """(M, M) how unsettled each pair of metrics is on these rated rows: 1 − |2p − 1|, p
    the bootstrap share in which the row's metric has the higher Pearson r."""
    n, m = metrics.shape
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(RESAMPLES, n))
    y = human[draws]
    x = metrics[draws]  # (B, n, M)
    y = y - y.mean(axis=1, keepdims=True)
    x = x - x.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (x * y[..., None]).sum(axis=1) / np.sqrt(
            (x * x).sum(axis=1) * (y * y).sum(axis=1)[:, None]
        )
    r = np.nan_to_num(r)
    p = (r[:, :, None] > r[:, None, :]).mean(axis=0) + 0.5 * (r[:, :, None] == r[:, None, :]).mean(
        axis=0
    )
    w = 1.0 - np.abs(2.0 * p - 1.0)
    np.fill_diagonal(w, 0.0)
    return np.asarray(w)


def metric_utility(
    human: np.ndarray, metrics: np.ndarray, rated: np.ndarray, seed: int = 0
) -> np.ndarray:
    """Per item, how much rating it would move the unsettled pairs of metrics (rated
    items: -inf). `human` is read on the `rated` rows only."""
    out = np.full(human.size, -np.inf)
    todo = ~rated
    if int(rated.sum()) < MIN_RATED or not todo.any():
        out[todo] = 0.0
        return out
    zx = _z(metrics, rated)
    y = human[rated]
    zy_rated = (y - y.mean()) / (y.std() or 1.0)
    design = np.column_stack([np.ones(int(rated.sum())), zx[rated]])
    coef, *_ = np.linalg.lstsq(design, zy_rated, rcond=None)
    resid = float(np.std(zy_rated - design @ coef)) or 1.0
    predicted = np.column_stack([np.ones(int(todo.sum())), zx[todo]]) @ coef
    r = (zx[rated] * zy_rated[:, None]).mean(axis=0)
    w = pair_weights(y, metrics[rated], seed)
    if not w.any():
        w = np.ones_like(w) - np.eye(w.shape[0])
    a, b = np.triu_indices(w.shape[0], 1)
    za, zb = zx[todo][:, a], zx[todo][:, b]
    total = np.zeros(int(todo.sum()))
    for q in QUANTILES:
        u = (predicted + resid * q)[:, None]
        # d r_m ≈ (u z_m − r_m (u² + z_m²) / 2) / n for one added point.
        da = u * za - r[a] * (u * u + za * za) / 2
        db = u * zb - r[b] * (u * u + zb * zb) / 2
        total += (w[a, b] * np.abs(da - db)).sum(axis=1)
    out[todo] = total / len(QUANTILES)
    return out


def _system_gain(means: np.ndarray, var: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per system, the weighted uncertainty one more of its items removes."""
    se2 = var / np.maximum(counts, 1)
    diff = np.abs(means[:, None] - means[None, :])
    spread = se2[:, None] + se2[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = 2.0 * norm.sf(diff / np.sqrt(spread))
        share = se2[:, None] / spread
    w = np.nan_to_num(w, nan=1.0)
    np.fill_diagonal(w, 0.0)
    gain = (w * np.nan_to_num(share)).sum(axis=1) / (np.maximum(counts, 1) + 1.0)
    return np.where(counts < 2, np.inf, gain)


def system_round(
    human: np.ndarray,
    systems: np.ndarray,
    rated: np.ndarray,
    base: Sequence[int],
    size: int,
) -> list[int]:
    """The next `size` unrated items (greedy, by the system whose mean is least settled),
    each system's items taken in `base` order; `human` is read on `rated` rows only."""
    labels = np.asarray([str(s) for s in systems], dtype=object)
    names = sorted(set(labels.tolist()))
    col = {s: j for j, s in enumerate(names)}
    code = np.array([col[str(s)] for s in labels], dtype=np.int64)
    counts = np.bincount(code[rated], minlength=len(names)).astype(np.float64)
    sums = np.bincount(code[rated], weights=human[rated], minlength=len(names))
    sq = np.bincount(code[rated], weights=human[rated] ** 2, minlength=len(names))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / counts, 0.0)
        var = np.where(counts > 1, (sq - counts * means**2) / np.maximum(counts - 1, 1), np.nan)
    pooled = float(np.var(human[rated], ddof=1)) if int(rated.sum()) > 1 else 1.0
    var = np.where(np.isfinite(var) & (var > 0), var, pooled or 1.0)
    queues: list[list[int]] = [[] for _ in names]
    for i in base:
        if not rated[i]:
            queues[code[i]].append(int(i))
    heads = [0] * len(names)
    picked: list[int] = []
    while len(picked) < size:
        gain = _system_gain(means, var, counts)
        gain[[j for j in range(len(names)) if heads[j] >= len(queues[j])]] = -np.inf
        j = int(np.argmax(gain))  # the first of equals: names in order
        if not np.isfinite(gain[j]) and gain[j] < 0:
            break
        picked.append(queues[j][heads[j]])
        heads[j] += 1
        counts[j] += 1
    return picked


def next_round(
    target: str,
    human: np.ndarray,
    metrics: np.ndarray,
    systems: np.ndarray,
    rated: np.ndarray,
    base: Sequence[int],
    size: int,
    seed: int = 0,
) -> list[int]:
    """The next round's `size` unrated items, most useful first; ties by `base` order."""
    if target == "systems":
        return system_round(human, systems, rated, base, size)
    utility = metric_utility(human, metrics, rated, seed)
    place = np.empty(human.size, dtype=np.int64)
    place[np.asarray(base, dtype=np.int64)] = np.arange(len(base))
    todo = np.array([int(i) for i in base if not rated[i]], dtype=np.int64)
    # Borda count of the two orders: the utility rests on few ratings in early rounds, and
    # the base order (the strategy's, from every item's scores) keeps its say.
    by_utility = np.empty(todo.size)
    by_utility[np.lexsort((place[todo], -np.round(utility[todo], 12)))] = np.arange(todo.size)
    by_base = np.arange(todo.size, dtype=np.float64)
    mixed = np.lexsort((by_base, by_utility + by_base))
    return [int(i) for i in todo[mixed][:size]]


def round_sizes(n: int, rounds: int, share: float = CAMPAIGN_SHARE) -> list[int]:
    """The items rated by the end of each round: `share` of `n` in equal rounds."""
    return [int(round(n * share * (r + 1) / rounds)) for r in range(rounds)]


def adaptive_order(
    target: str,
    base: Sequence[int],
    human: np.ndarray,
    metrics: np.ndarray,
    systems: np.ndarray,
    rounds: int,
    seed: int = 0,
) -> list[int]:
    """A campaign replayed: the first round is `base`'s head, each later round chosen by
    `next_round` from the human scores of the items rated so far; after the last round the
    remaining items follow in the order the ratings then give."""
    n = len(base)
    rated = np.zeros(n, dtype=bool)
    ends = round_sizes(n, rounds)
    order = [int(i) for i in base[: ends[0]]]
    rated[order] = True
    for end in [*ends[1:], n]:
        chosen = next_round(target, human, metrics, systems, rated, base, end - len(order), seed)
        order.extend(chosen)
        rated[chosen] = True
    return order
