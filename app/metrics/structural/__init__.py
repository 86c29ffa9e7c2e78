"""Structural metrics: SAMSA and SAMSA_abl, scored against scenes of each source, and the
BLEU-SAMSA means computed from stored BLEU and SAMSA scores."""

from meaningbench.metrics.registry import register
from meaningbench.metrics.structural.bleu_samsa import BleuSamsaAmMetric, BleuSamsaGmMetric
from meaningbench.metrics.structural.samsa import SamsaAblMetric, SamsaMetric

register(SamsaMetric)
register(SamsaAblMetric)
register(BleuSamsaAmMetric)
register(BleuSamsaGmMetric)

__all__ = ["BleuSamsaAmMetric", "BleuSamsaGmMetric", "SamsaAblMetric", "SamsaMetric"]
