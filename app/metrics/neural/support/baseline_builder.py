"""Compute and store a BERTScore baseline for a model that has none.

The mean P/R/F over shuffled pairs of unrelated sentences (from a study, or the built-in
sentence list), for one layer or all of them, merged into the model's baseline file in
`models_dir()/baselines/` (bert-score's format: row i = layer i).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.support.baselines import (
    Baseline,
    baseline_path,
    compute_baseline,
    read_rows,
    unrelated_pairs,
    write_rows,
)
from meaningbench.metrics.neural.support.models import resolve_model
from meaningbench.runtime import CancelToken


@dataclass(frozen=True)
class BaselineResult:
    path: Path
    model: str
    n_pairs: int
    layers: dict[int, Baseline]


def build_baseline(
    model: str,
    sentences: Sequence[str],
    *,
    layers: Sequence[int] | None = None,
    n_pairs: int = 2000,
    seed: int = 0,
    device: str = "auto",
    batch_size: int = 64,
    cancel: CancelToken | None = None,
) -> BaselineResult:
    """Baselines for `layers` (default: every layer) written to the model's baseline file."""
    ref = resolve_model(model)
    probe = BertScoreMetric(model=model, device=device, embedding_cache_mb=0)
    n_layers = probe.loaded().num_layers
    wanted = list(layers) if layers else list(range(n_layers + 1))
    pairs = unrelated_pairs(sentences, n_pairs, seed)
    computed: dict[int, Baseline] = {}
    for layer in wanted:
        metric = BertScoreMetric(
            model=model, layer=layer, device=device, batch_size=batch_size, embedding_cache_mb=0
        )

        def score(
            ps: Sequence[tuple[str, str]], m: BertScoreMetric = metric
        ) -> list[tuple[float, float, float]]:
            raw = m.score_pairs_raw([(c, (r,)) for c, r in ps], cancel, None, persist_refs=False)
            return [prf for prf, *_ in raw]

        computed[layer] = compute_baseline(pairs, score)
    path = baseline_path(ref.key)
    rows = read_rows(path) if path.exists() else {}
    rows.update(computed)
    write_rows(path, rows, n_layers)
    return BaselineResult(path, model, len(pairs), computed)
