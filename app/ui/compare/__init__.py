"""Compare and explain: systems side by side, BERTScore matching, SARI, SAMSA and scenes."""

from meaningbench.ui.compare.compare_view import ComparePage, CompareView

__all__ = ["ComparePage", "CompareView"]
