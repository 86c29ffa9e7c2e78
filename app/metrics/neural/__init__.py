"""Neural metrics: BERTScore, Sentence-BERT cosine, MeaningBERT, BLANC-help and Coverage.

Each is registered by an entry point in pyproject.toml. Importing them imports neither torch
nor transformers: they load inside the methods that run a model.
"""

from __future__ import annotations

from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.blanc import BlancHelpMetric
from meaningbench.metrics.neural.coverage import CoverageMetric
from meaningbench.metrics.neural.meaningbert import MeaningBertMetric
from meaningbench.metrics.neural.sbert import SentenceCosineMetric

__all__ = [
    "BertScoreMetric",
    "BlancHelpMetric",
    "CoverageMetric",
    "MeaningBertMetric",
    "SentenceCosineMetric",
]
