"""Sanity checks of a metric (MeaningBERT §3.3): identical pairs high, unrelated pairs low.

For each source sentence s of the study: score(s, s) must be near 100 and score(s, u) near
0 for a u that shares no meaning with s — a word soup of vocabulary words outside s
(length-matched), or a real sentence of the study under the lexical-overlap bar
(ROUGE-1/2/L < 0.20 and BLEU < 20; a source with no such sentence falls back to a soup,
counted in `n_fallback`). Pass rates:
- identical: share of pairs with round(value) ≥ X for X in 95..99, and = 100;
- unrelated: share with round(value) ≤ X for X in 5..1, and = 0.
`round` is Python's (half to even), as the study's scripts round; rates are over the pairs
the metric scored (pairs it failed on are counted in `n_errors`, not as failures).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.analysis.data import study_session
from meaningbench.analysis.score_columns import runs_frame
from meaningbench.core import controls
from meaningbench.db.frames import items_frame
from meaningbench.db.models import MetricRun
from meaningbench.db.study import Study
from meaningbench.metrics.base import Metric, Pair, resolve_references
from meaningbench.runtime import CancelToken

IDENTICAL_THRESHOLDS = (95, 96, 97, 98, 99, 100)
UNRELATED_THRESHOLDS = (5, 4, 3, 2, 1, 0)
UNRELATED_MODES = ("wordsoup", "sampled")
BATCH = 256


def identical_rates(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    v = np.round(np.asarray(values, dtype=np.float64))
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {str(t): float("nan") for t in IDENTICAL_THRESHOLDS}
    out = {str(t): float((v >= t).mean()) for t in IDENTICAL_THRESHOLDS[:-1]}
    out["100"] = float((v == 100).mean())
    return out


def unrelated_rates(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    v = np.round(np.asarray(values, dtype=np.float64))
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {str(t): float("nan") for t in UNRELATED_THRESHOLDS}
    out = {str(t): float((v <= t).mean()) for t in UNRELATED_THRESHOLDS[:-1]}
    out["0"] = float((v == 0).mean())
    return out


@dataclass
class SanityPairs:
    sources: list[str]
    unrelated: list[str]
    mode: str
    n_fallback: int = 0


def build_sanity_pairs(
    sources: Sequence[str],
    *,
    unrelated: str = "wordsoup",
    n: int | None = None,
    seed: int = 0,
    candidates: Sequence[str] | None = None,
    vocabulary_texts: Sequence[str] | None = None,
) -> SanityPairs:
    """Pick the sources (distinct, `n` of them at random if given) and their unrelated texts.

    `candidates` are the real sentences to sample from (default: the other sources);
    `vocabulary_texts` feed the word-soup vocabulary (default: sources and candidates).
    """
    if unrelated not in UNRELATED_MODES:
        raise ValueError(f"unrelated must be one of {UNRELATED_MODES}")
    rng = random.Random(seed)
    distinct = list(dict.fromkeys(s for s in sources if s and s.strip()))
    if n is not None and n < len(distinct):
        distinct = rng.sample(distinct, n)
    pool = list(candidates) if candidates is not None else list(dict.fromkeys(sources))
    vocab = controls.build_vocabulary(vocabulary_texts or [*distinct, *pool])
    out: list[str] = []
    fallback = 0
    for s in distinct:
        text = None
        if unrelated == "sampled":
            text = controls.sample_unrelated(s, pool, rng)
            fallback += text is None
        if text is None:
            try:
                text = controls.make_word_soup(s, vocab, rng)
            except ValueError:  # the study's words are all in this source (one source)
                text = controls.make_word_soup(s, controls.FALLBACK_VOCABULARY, rng)
        out.append(text)
    return SanityPairs(distinct, out, unrelated, fallback)


@dataclass
class SanityResult:
    metric: str
    n: int
    identical: dict[str, float]
    unrelated: dict[str, float]
    identical_values: np.ndarray
    unrelated_values: np.ndarray
    unrelated_mode: str = "wordsoup"
    n_errors: int = 0
    n_fallback: int = 0
    elapsed_s: float = 0.0
    error: str | None = None  # the metric could not run at all

    def to_json(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "unrelated": self.unrelated,
            "n": self.n,
            "n_errors": self.n_errors,
            "n_fallback": self.n_fallback,
            "unrelated_mode": self.unrelated_mode,
            "identical_mean": _mean(self.identical_values),
            "unrelated_mean": _mean(self.unrelated_values),
            "error": self.error,
        }


def _mean(values: np.ndarray) -> float:
    v = values[np.isfinite(values)]
    return float(v.mean()) if v.size else float("nan")


def _score(
    metric: Metric,
    pairs: list[Pair],
    cancel: CancelToken | None,
    progress: Callable[[int, int], None] | None,
    done: int,
    total: int,
) -> np.ndarray:
    values = np.full(len(pairs), np.nan)
    for start in range(0, len(pairs), BATCH):
        if cancel is not None:
            cancel.check()
        batch = pairs[start : start + BATCH]
        for k, score in enumerate(metric.score_batch(batch, cancel)):
            if score.error is None and score.value is not None:
                values[start + k] = float(score.value)
        if progress is not None:
            progress(done + start + len(batch), total)
    return values


def run_sanity(
    metric: Metric | str,
    sources: Sequence[str],
    *,
    unrelated: str = "wordsoup",
    n: int | None = None,
    seed: int = 0,
    candidates: Sequence[str] | None = None,
    pairs: SanityPairs | None = None,
    name: str | None = None,
    cancel: CancelToken | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SanityResult:
    """Score identical and unrelated pairs built from `sources` with one metric.

    `metric` is a configured Metric or a registry name. Pass `pairs` (from
    `build_sanity_pairs`) to score several metrics on the very same pairs.
    """
    if isinstance(metric, str):
        from meaningbench.metrics.registry import create_metric

        metric = create_metric(metric)
    pairs = pairs or build_sanity_pairs(
        sources, unrelated=unrelated, n=n, seed=seed, candidates=candidates
    )
    mode = metric.reference_mode
    same = [
        Pair(-(k + 1), s, s, resolve_references(s, (), mode)) for k, s in enumerate(pairs.sources)
    ]
    other = [
        Pair(-(k + 1), s, u, resolve_references(s, (), mode))
        for k, (s, u) in enumerate(zip(pairs.sources, pairs.unrelated, strict=True))
    ]
    total = len(same) + len(other)
    start = time.perf_counter()
    ident = _score(metric, same, cancel, progress, 0, total)
    unrel = _score(metric, other, cancel, progress, len(same), total)
    return SanityResult(
        metric=name or metric.name,
        n=len(same),
        identical=identical_rates(ident),
        unrelated=unrelated_rates(unrel),
        identical_values=ident,
        unrelated_values=unrel,
        unrelated_mode=pairs.mode,
        n_errors=int((~np.isfinite(ident)).sum() + (~np.isfinite(unrel)).sum()),
        n_fallback=pairs.n_fallback,
        elapsed_s=time.perf_counter() - start,
    )


@dataclass(frozen=True)
class SanityTable:
    results: dict[str, SanityResult] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"metrics": {k: v.to_json() for k, v in self.results.items()}}

    def to_frame(self) -> pd.DataFrame:
        """The MeaningBERT paper's layout: one row per metric, thresholds as columns."""
        rows = {}
        for name, r in self.results.items():
            row = {
                f"identical ≥{t}" if t != "100" else "identical =100": v
                for t, v in r.identical.items()
            }
            row.update(
                {
                    f"unrelated ≤{t}" if t != "0" else "unrelated =0": v
                    for t, v in r.unrelated.items()
                }
            )
            row["n"] = r.n
            rows[name] = row
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "metric"
        return frame


def study_texts(session: Session) -> tuple[list[str], list[str]]:
    """The study's distinct regular sources, and every regular text (for vocabularies)."""
    items = items_frame(session, kinds=("regular",))
    sources = list(dict.fromkeys(items["source"].tolist()))
    return sources, sources + list(dict.fromkeys(items["output"].tolist()))


def study_metrics(session: Session) -> list[tuple[str, str, dict[str, Any]]]:
    """(column, metric name, config) of every metric config the study has run."""
    runs = runs_frame(session)
    out = []
    for row in runs.itertuples(index=False):
        config = session.scalar(select(MetricRun.config).where(MetricRun.id == row.last_run_id))
        out.append((str(row.column), str(row.metric), dict(config or {})))
    return out


def study_sanity(
    study_or_session: Study | Session,
    metrics: Sequence[tuple[str, str, dict[str, Any]]] | None = None,
    *,
    unrelated: str = "wordsoup",
    n: int | None = None,
    seed: int = 0,
    cancel: CancelToken | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> SanityTable:
    """Sanity checks of the given metrics — (canonical name, metric, config), as
    `meaningbench.jobs.metric_specs.configured_names` makes them — or of every config the study has
    run; results are keyed by the canonical name.

    All metrics score the same pairs. A metric that cannot be created or is unavailable
    gets a result with `error` set, and the others still run.
    """
    from meaningbench.metrics.registry import create_metric

    with study_session(study_or_session) as session:
        sources, texts = study_texts(session)
        chosen = list(metrics) if metrics is not None else study_metrics(session)
    pairs = build_sanity_pairs(
        sources, unrelated=unrelated, n=n, seed=seed, candidates=sources, vocabulary_texts=texts
    )
    table = SanityTable()
    for column, name, config in chosen:
        nan_result = SanityResult(
            column,
            0,
            identical_rates([]),
            unrelated_rates([]),
            np.array([]),
            np.array([]),
            unrelated_mode=pairs.mode,
        )
        try:
            metric = create_metric(name, **config)
        except (KeyError, ValueError) as exc:
            nan_result.error = str(exc).strip("'\"")
            table.results[column] = nan_result
            continue
        available = metric.availability()
        if not available.ok:
            nan_result.error = available.reason or "not available"
            table.results[column] = nan_result
            continue
        report = (lambda d, t, c=column: progress(c, d, t)) if progress else None
        table.results[column] = run_sanity(
            metric, sources, pairs=pairs, name=column, cancel=cancel, progress=report
        )
    return table
