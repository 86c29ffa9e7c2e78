"""Structural metrics: SAMSA and SAMSA_abl, scored against scenes of each source."""

from meaningbench.metrics.registry import register
from meaningbench.metrics.structural.samsa import SamsaAblMetric, SamsaMetric

register(SamsaMetric)
register(SamsaAblMetric)

__all__ = ["SamsaAblMetric", "SamsaMetric"]
