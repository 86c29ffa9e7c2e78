"""The field's protocol for data selection (Zouhar, Cui & Sachan, TACL 2025, "How to Select
Datapoints for Efficient Human Evaluation of NLG Models?", package subset2evaluate 1.0.27).

A strategy's order of the items is cut at budgets of 5, 10, …, 50 % of the items
(`PROPS`, subset2evaluate `utils.PROPS`; a budget of p keeps the first int(n · p) items).
On each cut the ranking (of the study's systems by their mean human score, or of the
metrics by their correlation with the humans) is compared with the ranking on all the
data by Kendall's τ-b (0 where it is undefined, as subset2evaluate's
`eval_subset_correlation`); *accuracy* is τ averaged over the ten budgets.

*Parity* follows `evaluate.eval_clucor_par_randnorm` (its correlation half): random order's
τ at each budget is averaged over seeds 0–9 (the target); for each budget, the order's
smallest prefix k ≥ 5 whose τ reaches the target (all n items if none does), as k / (n · p);
averaged over the budgets; and divided by the same figure of random order over seeds
10–19. Parity 0.7: the strategy reaches random's accuracy with 70 % of random's data.

Every prefix of every order is ranked at once from cumulative sums: a curve holds τ for
k = 0 … n items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from meaningbench.analysis.metaeval_measures import pairwise_system_pvalues, permutation_signs

# subset2evaluate utils.PROPS, the same floats: int(n * p) must cut where it cuts.
PROPS: tuple[float, ...] = tuple(float(p) for p in np.linspace(0.05, 0.5, 10))
# subset2evaluate's parity search starts at five items.
MIN_PREFIX = 5
# subset2evaluate's random_seeds: seeds 0–9 make the target, 10–19 the normaliser.
RANDOM_SEEDS = 10
# Equal in exact arithmetic is equal here (ties of means, τ reaching random's mean τ).
TOLERANCE = 1e-9


def kendall_rows(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """τ-b of each row of `values` (…, S) with `reference` (S,); 0 where a row has a
    missing value or either side is constant (subset2evaluate: 0 on constant input)."""
    s = reference.size
    i, j = np.triu_indices(s, 1)
    dy = _signs(reference[i] - reference[j], reference)
    dx = _signs(values[..., i] - values[..., j], values)
    ny = float(np.count_nonzero(dy))
    nx = np.count_nonzero(dx, axis=-1).astype(np.float64)
    missing = np.isnan(values).any(axis=-1)
    num = (np.nan_to_num(dx) * dy).sum(axis=-1)
    denom = np.sqrt(nx * ny)
    out = np.zeros(values.shape[:-1])
    ok = (denom > 0) & ~missing
    out[ok] = num[ok] / denom[ok]
    return out


def _signs(diff: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Signs of differences, ties within rounding: two means equal in exact arithmetic
    differ in their last bits by the order of the sums (cumulative here, pairwise in
    numpy's mean), and a tie must not depend on it."""
    finite = values[np.isfinite(values)]
    tol = TOLERANCE * max(1.0, float(np.abs(finite).max(initial=0.0)))
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(diff) <= tol, 0.0, np.sign(diff))


def system_curves(orders: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """τ (orders, n + 1) between the systems' mean scores on each prefix and on all items.

    `scores` (n, S): each item's human score of each system, NaN where the item has none
    (one output per item: a single finite column)."""
    filled = np.nan_to_num(scores)
    seen = np.isfinite(scores).astype(np.float64)
    full = filled.sum(axis=0) / np.maximum(seen.sum(axis=0), 1)
    zero = np.zeros((orders.shape[0], 1, scores.shape[1]))
    sums = np.concatenate([zero, np.cumsum(filled[orders], axis=1)], axis=1)
    counts = np.concatenate([zero, np.cumsum(seen[orders], axis=1)], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / counts, np.nan)
    return kendall_rows(means, full)


def pearson_prefixes(orders: np.ndarray, human: np.ndarray, metrics: np.ndarray) -> np.ndarray:
    """Each metric's Pearson r with the humans over each prefix: (orders, n + 1, M), NaN
    below two items or where either side is constant."""
    y = human - human.mean()
    x = metrics - metrics.mean(axis=0)

    def cum(v: np.ndarray) -> np.ndarray:
        c = np.cumsum(v[orders], axis=1)
        return np.concatenate([np.zeros_like(c[:, :1]), c], axis=1)

    k = np.arange(orders.shape[1] + 1, dtype=np.float64)[None, :, None]
    sy, syy = cum(y)[..., None], cum(y * y)[..., None]
    sx, sxx, sxy = cum(x), cum(x * x), cum(x * y[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / k
        vx = sxx - sx * sx / k
        vy = syy - sy * sy / k
        r = cov / np.sqrt(vx * vy)
    scale = max(1.0, float(np.abs(x).max(initial=0.0)) * float(np.abs(y).max(initial=0.0)))
    flat = (vx <= 1e-12 * scale * k) | (vy <= 1e-12 * scale * k) | (k < 2)
    return np.where(flat, np.nan, r)


def metric_curves(orders: np.ndarray, human: np.ndarray, metrics: np.ndarray) -> np.ndarray:
    """τ (orders, n + 1) between the metrics' Pearson r with the humans (over all outputs)
    on each prefix and on all items."""
    values = pearson_prefixes(orders, human, metrics)
    return kendall_rows(values, values[0, -1])


def accuracy_at_props(curve: np.ndarray) -> np.ndarray:
    """τ at each of `PROPS` (a curve holds τ for 0 … n items)."""
    n = curve.size - 1
    return np.array([curve[int(n * p)] for p in PROPS])


def parity(curve: np.ndarray, targets: Sequence[float]) -> float:
    """subset2evaluate's `eval_clucor_par` (correlation half) on one order's curve."""
    n = curve.size - 1
    shares = []
    for p, target in zip(PROPS, targets, strict=True):
        # τ takes few values, and random's target is their mean: "reached" must not hang
        # on the last bits of a sum (the reference compares floats summed otherwise).
        reached = np.flatnonzero(curve[MIN_PREFIX:] >= target - TOLERANCE)
        k = MIN_PREFIX + int(reached[0]) if reached.size else n
        shares.append(k / (n * p))
    return float(np.mean(shares))


def completion(orders: np.ndarray, column: np.ndarray, n_columns: int) -> np.ndarray:
    """(orders, n_columns) the prefix length at which every output of each column (a
    source holding every system) is in; `column` per output, -1 for one outside them."""
    inside = np.flatnonzero(column >= 0)
    place = np.empty_like(orders)
    rows = np.arange(orders.shape[0])[:, None]
    place[rows, orders] = np.arange(orders.shape[1])[None, :]
    out = np.zeros((orders.shape[0], n_columns), dtype=np.int64)
    for r in range(orders.shape[0]):
        np.maximum.at(out[r], column[inside], place[r, inside] + 1)
    return out


# subset2evaluate's `compute_pairwise_p_values`: 1,000 sign flips from seed 0 per call.
SPA_PERMUTATIONS = 1000


def _pvalues(matrix: np.ndarray) -> np.ndarray:
    """The paired permutation test's p-values as subset2evaluate draws them: signs for
    the matrix's own number of sources, seed 0."""
    return pairwise_system_pvalues(matrix, permutation_signs(0, SPA_PERMUTATIONS, matrix.shape[1]))


def system_spa(orders: np.ndarray, column: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """(orders, len(PROPS)) soft pairwise accuracy of each budget's cut against all the
    data, as subset2evaluate's `eval_subset_spa`: 1 − mean over pairs of systems of
    |p on the cut − p on all|, p from the paired permutation test over the sources that
    hold every system (`matrix` (S, N) their mean human scores). A source
    counts on a cut once all its outputs are in (subset2evaluate's item is the whole
    source), in the order they come whole; `column` maps each output to its source's
    column, -1 for the others."""
    full = _pvalues(matrix)
    upper = np.triu_indices(matrix.shape[0], 1)
    done = completion(orders, column, matrix.shape[1])
    n = orders.shape[1]
    cache: dict[bytes, float] = {}
    out = np.zeros((orders.shape[0], len(PROPS)))
    for r in range(orders.shape[0]):
        for b, p in enumerate(PROPS):
            # In the order the sources come whole: the test's signs go by position.
            cols = np.argsort(done[r], kind="stable")[: int((done[r] <= int(n * p)).sum())]
            key = cols.tobytes()
            if key not in cache:
                part = _pvalues(matrix[:, cols])
                cache[key] = float(1.0 - np.mean(np.abs(part - full)[upper]))
            out[r, b] = cache[key]
    return out


@dataclass
class FieldRow:
    """A strategy's figures by the field's protocol, over its seeds."""

    strategy: str
    accuracy: float  # τ averaged over the budgets, then over the seeds
    accuracy_sd: float  # over the seeds
    by_budget: list[float]  # mean τ at each budget of PROPS
    parity: float  # share of random's data for random's accuracy (mean over seeds)
    parity_sd: float
    # Systems only: soft pairwise accuracy averaged over the budgets, then the seeds
    # (None: not computed, or no source holds every system).
    spa: float | None = None
    spa_by_budget: list[float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "accuracy_kendall": self.accuracy,
            "accuracy_kendall_sd": self.accuracy_sd,
            "kendall_by_budget": self.by_budget,
            "parity": self.parity,
            "parity_sd": self.parity_sd,
            "accuracy_spa": self.spa,
            "spa_by_budget": self.spa_by_budget,
        }


@dataclass
class FieldProtocol:
    """The field's figures of every strategy on one target ("metrics" or "systems")."""

    target: str
    n_items: int
    random_target: list[float]  # random's mean τ at each budget, seeds 0–9
    random_parity: float  # random's own parity over seeds 10–19: the normaliser
    rows: list[FieldRow]

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "protocol": "subset2evaluate 1.0.27: Kendall tau-b accuracy averaged over "
            "budgets of 5-50 % of the items in steps of 5; parity as eval_clucor_par_randnorm",
            "budgets": [round(p * 100) for p in PROPS],
            "items": self.n_items,
            "random_target_kendall": self.random_target,
            "random_parity_normaliser": self.random_parity,
            "strategies": [r.to_dict() for r in self.rows],
        }

    def lines(self) -> list[str]:
        what = "the systems (mean human score)" if self.target == "systems" else "the metrics"
        out = [
            f"field protocol (subset2evaluate), ranking {what} on {self.n_items} items: "
            "Kendall tau averaged over budgets of 5-50 % of the items; parity = share of "
            "random's data for random's accuracy (random over seeds 0-9, normalised by 10-19)"
        ]
        width = max([13, *(len(r.strategy) for r in self.rows)])
        for r in self.rows:
            spa = "" if r.spa is None else f"   SPA {r.spa:5.3f}"
            out.append(
                f"  {r.strategy:<{width}} tau {r.accuracy:6.3f} ± {r.accuracy_sd:5.3f}   "
                f"parity {r.parity:6.1%} ± {r.parity_sd:5.1%}{spa}"
            )
        return out


def field_protocol(
    target: str,
    curves_of: Callable[[np.ndarray], np.ndarray],
    orders: dict[str, np.ndarray],
    random_orders: np.ndarray,
) -> FieldProtocol:
    """The field's figures of each strategy's `orders` (seeds × n), with random order's
    target and normaliser from `random_orders` (2 × `RANDOM_SEEDS` × n: seeds 0–19).

    `curves_of(orders)` gives τ (orders, n + 1) of every prefix."""
    names = list(orders)
    stacked = np.concatenate([random_orders, *(orders[s] for s in names)])
    curves = curves_of(stacked)
    n = stacked.shape[1]
    if n < MIN_PREFIX:
        raise ValueError(f"the field's protocol needs at least {MIN_PREFIX} items")
    acc = np.array([accuracy_at_props(c) for c in curves])
    goal = acc[:RANDOM_SEEDS].mean(axis=0)
    norm_curves = curves[RANDOM_SEEDS : 2 * RANDOM_SEEDS]
    norm = float(np.mean([parity(c, goal) for c in norm_curves]))
    rows = []
    at = 2 * RANDOM_SEEDS
    for name in names:
        m = orders[name].shape[0]
        a = acc[at : at + m]
        par = np.array([parity(c, goal) / norm for c in curves[at : at + m]])
        avg = a.mean(axis=1)
        rows.append(
            FieldRow(
                name,
                float(avg.mean()),
                float(avg.std(ddof=1)) if m > 1 else 0.0,
                a.mean(axis=0).tolist(),
                float(par.mean()),
                float(par.std(ddof=1)) if m > 1 else 0.0,
            )
        )
        at += m
    return FieldProtocol(target, n, goal.tolist(), norm, rows)
