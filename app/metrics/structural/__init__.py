"""Structural metrics: SAMSA and SAMSA_abl, scored against scenes of each source.

Each is registered by an entry point in pyproject.toml.
"""

from meaningbench.metrics.structural.samsa import SamsaAblMetric, SamsaMetric

__all__ = ["SamsaAblMetric", "SamsaMetric"]
