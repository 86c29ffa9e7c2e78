"""The statistics a sweep table adds to the correlation engine's: Kendall intervals, errors on
a common 0–1 scale, and the test of the best configuration against the runner-up.

Kendall's τ-b of a resample with counts w is (wᵀAw) / √((wᵀXw)(wᵀYw)), where A holds
sign(xᵢ − xⱼ)·sign(yᵢ − yⱼ) and X, Y the squared signs of each pair of items (copies of
one item are tied on both sides and add nothing), so all resamples come out of matrix
products over the items. It is exact and uses the same resamples as the Pearson and
Spearman intervals (`bootstrap.resample_counts`); above `KENDALL_MAX_ITEMS` items the
n × n matrices cost too much and the interval is left out (NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from meaningbench.analysis.bootstrap import bootstrap, resample_counts
from meaningbench.analysis.stats import pearson_columns, williams_test

KENDALL_MAX_ITEMS = 3000


def kendall_interval(
    x: np.ndarray, y: np.ndarray, *, n_boot: int, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of Kendall's τ-b of x against y (NaN pairs left out)."""
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = x.size
    if n < 3 or n_boot < 1 or n > KENDALL_MAX_ITEMS:
        return (float("nan"), float("nan"))
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    a, bx, by = sx * sy, sx * sx, sy * sy
    taus = []
    for w in resample_counts(n, n_boot, seed):
        num = ((w @ a) * w).sum(axis=1)
        den = np.sqrt(((w @ bx) * w).sum(axis=1) * ((w @ by) * w).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            taus.append(np.where(den > 0, num / den, np.nan))
    samples = np.concatenate(taus)
    finite = samples[np.isfinite(samples)]
    if finite.size < max(10, n_boot // 2):
        return (float("nan"), float("nan"))
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    return (float(low), float(high))


def errors_01(metric_01: np.ndarray, human_01: np.ndarray) -> tuple[float, float, int]:
    """(RMSE, MAE, n) of the metric taken as a prediction of the human score, both on 0–1."""
    keep = np.isfinite(metric_01) & np.isfinite(human_01)
    n = int(keep.sum())
    if n == 0:
        return (float("nan"), float("nan"), 0)
    diff = metric_01[keep] - human_01[keep]
    return (float(np.sqrt(np.mean(diff * diff))), float(np.mean(np.abs(diff))), n)


@dataclass
class BestVersusRunnerUp:
    """Whether the best configuration's correlation beats the runner-up's, two ways.

    Williams' test (one-sided, for correlations that share the human scores) on the items
    both configurations scored; the paired bootstrap resamples items once for both and
    looks at the difference of the two coefficients.
    """

    statistic: str  # pearson | spearman
    n: int
    best: float
    runner_up: float
    williams_t: float
    williams_p: float
    difference_ci: tuple[float, float]
    bootstrap_p: float  # share of resamples where the runner-up is at least as good
    n_boot: int

    @property
    def significant(self) -> bool:
        return bool(self.williams_p < 0.05 and self.bootstrap_p < 0.05)

    def to_dict(self) -> dict[str, object]:
        return {
            "statistic": self.statistic,
            "n": self.n,
            "best": self.best,
            "runner_up": self.runner_up,
            "williams_t": self.williams_t,
            "williams_p": self.williams_p,
            "difference_ci": list(self.difference_ci),
            "bootstrap_p": self.bootstrap_p,
            "n_boot": self.n_boot,
            "significant": self.significant,
        }


def _ranks(v: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return np.asarray(rankdata(v), dtype=np.float64)


def best_versus_runner_up(
    best: np.ndarray,
    runner_up: np.ndarray,
    human: np.ndarray,
    *,
    statistic: str = "pearson",
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BestVersusRunnerUp:
    """Test "best correlates better than runner-up" on the items where all three are known.

    For Spearman both tests run on ranks (Pearson's r of ranks is Spearman's ρ).
    """
    keep = np.isfinite(best) & np.isfinite(runner_up) & np.isfinite(human)
    a, b, h = best[keep], runner_up[keep], human[keep]
    if statistic == "spearman":
        a, b, h = _ranks(a), _ranks(b), _ranks(h)
    n = int(keep.sum())
    both = np.ones((n, 1), dtype=bool)
    r_a = float(pearson_columns(a[:, None], h, both)[0]) if n >= 3 else float("nan")
    r_b = float(pearson_columns(b[:, None], h, both)[0]) if n >= 3 else float("nan")
    r_ab = float(pearson_columns(a[:, None], b, both)[0]) if n >= 3 else float("nan")
    t, p = williams_test(r_a, r_b, r_ab, n, alternative="greater")
    samples = bootstrap(
        np.column_stack([best[keep], runner_up[keep]]),
        human[keep],
        n_boot=n_boot,
        seed=seed,
        spearman="rerank" if statistic == "spearman" else "none",
    )
    diff = getattr(samples, statistic)[:, 0] - getattr(samples, statistic)[:, 1]
    diff = diff[np.isfinite(diff)]
    if diff.size:
        alpha = (1.0 - confidence) / 2.0
        low, high = (float(v) for v in np.quantile(diff, [alpha, 1.0 - alpha]))
        boot_p = float(np.mean(diff <= 0.0))
    else:
        low = high = boot_p = float("nan")
    return BestVersusRunnerUp(
        statistic, n, r_a, r_b, float(t), float(p), (low, high), boot_p, int(diff.size)
    )
