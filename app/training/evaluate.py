"""Test figures of a trained model: agreement with human scores and the sanity checks.

The model is evaluated as the battery will use it: the saved folder reloaded, pairs
(source, output), the logit read as a 0–100 score and clipped to 0–100. The statistics and
the sanity checks are the analysis package's own (`meaningbench.analysis.correlate`,
`meaningbench.analysis.sanity.run_sanity` with the battery's `meaningbert` metric on the saved
folder), so a model card and the dashboard report the same numbers the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from meaningbench.runtime import CancelToken

BOOTSTRAP_SAMPLES = 1000


def clip_scores(values: np.ndarray) -> np.ndarray:
    return np.asarray(np.clip(values, 0.0, 100.0))


def regression_stats(
    predicted: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    *,
    groups: Sequence[Any] | np.ndarray | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Pearson, Spearman, Kendall (p-values, bootstrap 95% intervals resampled by source
    group), and R² and RMSE with the 0–100 score taken as a prediction of the human score."""
    from meaningbench.analysis.correlation import correlate

    result = correlate(
        np.asarray(predicted, dtype=np.float64),
        np.asarray(human, dtype=np.float64),
        n_boot=BOOTSTRAP_SAMPLES,
        seed=seed,
        groups=groups,
    )
    out = result.to_dict()
    out.pop("system_pearson", None)  # items of a training study need not have systems
    return out


def sanity_check(
    metric: Any,
    sources: Sequence[str],
    *,
    n: int | None,
    seed: int,
    cancel: CancelToken | None = None,
) -> dict[str, Any]:
    """The MeaningBERT sanity checks of the saved model, scored by the battery's `metric`
    on its folder: identical pairs (s, s) and word-soup pairs for up to `n` distinct
    held-out sources."""
    from meaningbench.analysis.sanity import run_sanity
    from meaningbench.metrics.neural.support.models import clear_model_cache
    from meaningbench.training.model import quiet_transformers

    try:
        with quiet_transformers():
            result = run_sanity(
                metric, sources, unrelated="wordsoup", n=n, seed=seed, cancel=cancel
            )
    finally:
        # The metric layer caches models by folder; a run's folder is deleted or rewritten
        # later, so its model must not outlive this check in the cache.
        clear_model_cache()
    return result.to_json()


def summarize_runs(values: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """Mean and sample SD of each statistic over runs (seeds)."""
    out: dict[str, Any] = {"n_runs": len(values)}
    for key in keys:
        xs = np.array([_number(v.get(key)) for v in values], dtype=np.float64)
        xs = xs[np.isfinite(xs)]
        out[key] = float(xs.mean()) if len(xs) else float("nan")
        out[f"{key}_sd"] = float(xs.std(ddof=1)) if len(xs) > 1 else float("nan")
    return out


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else float("nan")
