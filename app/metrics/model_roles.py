"""Which battery metrics run a model registered in a study.

A model is registered for the metric it was trained for. A sentence encoder registered for
`sbert_cosine` is a plain transformer encoder in a Sentence-Transformers folder, so BERTScore
reads its token embeddings as it reads any encoder's: it serves both metrics. Every other
registered model serves only its own metric (a cross-encoder's head means nothing to
another metric).
"""

from __future__ import annotations

_ALSO_SERVES = {"sbert_cosine": ("bertscore",)}


def metrics_for_model(metric: str) -> tuple[str, ...]:
    """The metrics that can run a model registered for `metric`, that one first."""
    return (metric, *_ALSO_SERVES.get(metric, ()))
