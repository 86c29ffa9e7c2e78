"""Neural metrics: BERTScore, Sentence-BERT cosine, MeaningBERT, BLEURT, LENS,
BLANC-help, Coverage, and QuestEval (run in its own environment).

Each is registered by an entry point in pyproject.toml. Importing them imports neither torch
nor transformers: they load inside the methods that run a model.
"""

from __future__ import annotations

from meaningbench.metrics.neural.bertscore import BertScoreMetric
from meaningbench.metrics.neural.blanc import BlancHelpMetric
from meaningbench.metrics.neural.bleurt import BleurtMetric
from meaningbench.metrics.neural.coverage import CoverageMetric
from meaningbench.metrics.neural.lens import LensMetric
from meaningbench.metrics.neural.meaningbert import MeaningBertMetric
from meaningbench.metrics.neural.questeval import QuestEvalMetric
from meaningbench.metrics.neural.sbert import SentenceCosineMetric

__all__ = [
    "BertScoreMetric",
    "BlancHelpMetric",
    "BleurtMetric",
    "CoverageMetric",
    "LensMetric",
    "MeaningBertMetric",
    "QuestEvalMetric",
    "SentenceCosineMetric",
]
