"""Test figures of a trained model: agreement with human scores and the sanity checks.

The model is evaluated as the battery will use it: the saved folder reloaded, pairs
(source, output), the logit read as a 0–100 score and clipped to 0–100. Statistics follow
metrics.md: Pearson, Spearman, Kendall with p-values, and R² and RMSE with the score taken
as a prediction of the human rating (R² may be negative).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from app.analysis.controls import build_vocabulary, make_word_soup
from app.training.augment import Example
from app.training.encoding import encode, predict

IDENTICAL_BARS = (95, 96, 97, 98, 99, 100)
UNRELATED_BARS = (5, 4, 3, 2, 1, 0)


def clip_scores(values: np.ndarray) -> np.ndarray:
    return np.clip(values, 0.0, 100.0)


def regression_stats(
    predicted: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray
) -> dict[str, Any]:
    """Correlation and error of predicted 0–100 scores against human scores."""
    from scipy import stats

    x = np.asarray(predicted, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    n = len(x)
    out: dict[str, Any] = {"n": n}
    if n == 0:
        return out | {k: float("nan") for k in ("pearson", "spearman", "kendall", "r2", "rmse")}
    residual = y - x
    out["rmse"] = float(np.sqrt(np.mean(residual**2)))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    out["r2"] = float(1.0 - np.sum(residual**2) / ss_tot) if ss_tot > 0 else float("nan")
    constant = n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0
    if constant:  # a correlation is undefined for a constant side
        for key in ("pearson", "spearman", "kendall"):
            out[key] = float("nan")
            out[f"{key}_p"] = float("nan")
        return out
    for key, fn in (
        ("pearson", stats.pearsonr),
        ("spearman", stats.spearmanr),
        ("kendall", stats.kendalltau),
    ):
        res = fn(x, y)
        out[key] = float(res.statistic)
        out[f"{key}_p"] = float(res.pvalue)
    return out


def pass_rates(identical: np.ndarray, unrelated: np.ndarray) -> dict[str, Any]:
    """MeaningBERT §3.3 pass rates on rounded scores, as shares in [0, 1]."""
    ident = np.round(identical)
    unrel = np.round(unrelated)
    rates: dict[str, Any] = {
        "n_identical": len(ident),
        "n_unrelated": len(unrel),
        "identical": {},
        "unrelated": {},
    }
    for bar in IDENTICAL_BARS:
        key = "=100" if bar == 100 else f">={bar}"
        ok = ident == 100 if bar == 100 else ident >= bar
        rates["identical"][key] = float(np.mean(ok)) if len(ident) else float("nan")
    for bar in UNRELATED_BARS:
        key = "=0" if bar == 0 else f"<={bar}"
        ok = unrel == 0 if bar == 0 else unrel <= bar
        rates["unrelated"][key] = float(np.mean(ok)) if len(unrel) else float("nan")
    rates["identical_mean"] = float(np.mean(identical)) if len(ident) else float("nan")
    rates["unrelated_mean"] = float(np.mean(unrelated)) if len(unrel) else float("nan")
    return rates


def sanity_pairs(
    sources: Sequence[str], vocabulary_texts: Sequence[str], *, n: int | None, seed: int
) -> tuple[list[Example], list[Example]]:
    """Identical pairs (s, s) and word-soup pairs (s, soup) for up to `n` distinct sources."""
    rng = random.Random(seed)
    distinct = sorted(set(sources))
    if n is not None and len(distinct) > n:
        distinct = sorted(rng.sample(distinct, n))
    identical = [Example(s, s, 100.0, "identical") for s in distinct]
    vocabulary = build_vocabulary(vocabulary_texts)
    unrelated = []
    for s in distinct:
        try:
            unrelated.append(Example(s, make_word_soup(s, vocabulary, rng), 0.0, "unrelated"))
        except ValueError:
            continue
    return identical, unrelated


def sanity_check(
    model: Any,
    tokenizer: Any,
    sources: Sequence[str],
    vocabulary_texts: Sequence[str],
    *,
    device: str,
    max_length: int,
    n: int | None,
    seed: int,
    check: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Pass rates of a saved model (logit = score) on identical and word-soup pairs."""
    identical, unrelated = sanity_pairs(sources, vocabulary_texts, n=n, seed=seed)
    ident_scores = predict(
        model, encode(tokenizer, identical, max_length), device=device, check=check
    )
    unrel_scores = predict(
        model, encode(tokenizer, unrelated, max_length), device=device, check=check
    )
    return pass_rates(clip_scores(ident_scores), clip_scores(unrel_scores))


def summarize_runs(values: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """Mean and sample SD of each statistic over runs (seeds)."""
    out: dict[str, Any] = {"n_runs": len(values)}
    for key in keys:
        xs = np.array([v.get(key, np.nan) for v in values], dtype=np.float64)
        xs = xs[np.isfinite(xs)]
        out[key] = float(xs.mean()) if len(xs) else float("nan")
        out[f"{key}_sd"] = float(xs.std(ddof=1)) if len(xs) > 1 else float("nan")
    return out
