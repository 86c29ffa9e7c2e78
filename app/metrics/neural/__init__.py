"""Neural metrics: BERTScore, Sentence-BERT cosine, MeaningBERT, BLANC-help and Coverage.

Importing this package registers the metrics and imports neither torch nor transformers:
they load inside the methods that run a model.
"""

from __future__ import annotations

from app.metrics.neural.bertscore import BertScoreMetric
from app.metrics.neural.blanc import BlancHelpMetric
from app.metrics.neural.coverage import CoverageMetric
from app.metrics.neural.meaningbert import MeaningBertMetric
from app.metrics.neural.sbert import SentenceCosineMetric
from app.metrics.registry import register

for _cls in (
    BertScoreMetric,
    SentenceCosineMetric,
    MeaningBertMetric,
    BlancHelpMetric,
    CoverageMetric,
):
    register(_cls)

__all__ = [
    "BertScoreMetric",
    "BlancHelpMetric",
    "CoverageMetric",
    "MeaningBertMetric",
    "SentenceCosineMetric",
]
