"""Compare and explain: systems side by side, BERTScore matching, SARI, SAMSA and scenes."""

from meaningbench.ui.compare.page import ComparePage, CompareView

__all__ = ["ComparePage", "CompareView"]
