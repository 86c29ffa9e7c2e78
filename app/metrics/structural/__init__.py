"""Structural metrics: SAMSA and SAMSA_abl, scored against scenes of each source."""

from app.metrics.registry import register
from app.metrics.structural.samsa import SamsaAblMetric, SamsaMetric

register(SamsaMetric)
register(SamsaAblMetric)

__all__ = ["SamsaAblMetric", "SamsaMetric"]
