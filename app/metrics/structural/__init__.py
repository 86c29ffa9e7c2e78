"""Structural metrics: SAMSA and SAMSA_abl, scored against scenes of each source, and the
BLEU-SAMSA means computed from stored BLEU and SAMSA scores.

Each is registered by an entry point in pyproject.toml.
"""

from meaningbench.metrics.structural.bleu_samsa import BleuSamsaAmMetric, BleuSamsaGmMetric
from meaningbench.metrics.structural.samsa import SamsaAblMetric, SamsaMetric

__all__ = ["BleuSamsaAmMetric", "BleuSamsaGmMetric", "SamsaAblMetric", "SamsaMetric"]
