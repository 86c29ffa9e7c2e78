"""Lexical metrics: n-gram, edit and readability measures, no torch.

Each is registered by an entry point in pyproject.toml; each imports its library
(sacrebleu, rouge-score, NLTK, textstat) only when it first scores, so listing the battery
stays fast.
"""

from __future__ import annotations

from meaningbench.metrics.lexical.meteor import MeteorMetric
from meaningbench.metrics.lexical.readability import (
    FkbleuMetric,
    FkglMetric,
    IbleuMetric,
    WstfMetric,
)
from meaningbench.metrics.lexical.rouge import Rouge1Metric, Rouge2Metric, RougeLMetric
from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric, ChrfMetric, TerMetric
from meaningbench.metrics.lexical.sari_metric import SariMetric
from meaningbench.metrics.lexical.surface import CompressionRatioMetric, EditSimilarityMetric

LEXICAL_METRICS = (
    BleuMetric,
    ChrfMetric,
    TerMetric,
    Rouge1Metric,
    Rouge2Metric,
    RougeLMetric,
    MeteorMetric,
    SariMetric,
    IbleuMetric,
    FkbleuMetric,
    FkglMetric,
    WstfMetric,
    CompressionRatioMetric,
    EditSimilarityMetric,
)

__all__ = [cls.__name__ for cls in LEXICAL_METRICS] + ["LEXICAL_METRICS"]
