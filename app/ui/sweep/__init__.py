"""The Sweep page: which encoder, which layer, idf or not, compared against the ratings."""

from meaningbench.ui.sweep.page import SweepPage

__all__ = ["SweepPage"]
