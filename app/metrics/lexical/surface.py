"""Surface measures: how long the output is against its source, and how much of its
characters survive (rapidfuzz's normalized Levenshtein similarity).
"""

from __future__ import annotations

from typing import Any, ClassVar

from meaningbench.metrics.base import ItemScore, MetricInfo, Pair, pair_references
from meaningbench.metrics.lexical.common import LexicalMetric


class CompressionRatioMetric(LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="compression",
        label="Compression ratio",
        family="lexical",
        description="Characters of the output over characters of the source (as EASSE); "
        "value = 100 × ratio (100 = same length; above 100 = longer).",
        value_range=(0.0, 200.0),
        reference="len(output) / len(source) in characters",
        parity_test="tests/metrics/lexical/test_oracles.py::test_surface_measures",
    )
    defaults: ClassVar[dict[str, Any]] = {}
    packages = ()

    def score_one(self, pair: Pair) -> ItemScore:
        if not pair.source:
            raise ValueError("the source is empty")
        ratio = len(pair.output) / len(pair.source)
        details = {"source_chars": len(pair.source), "output_chars": len(pair.output)}
        return ItemScore(100 * ratio, ratio, details)


class EditSimilarityMetric(LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="edit_similarity",
        label="Edit similarity",
        family="lexical",
        description="Character-level normalized Levenshtein similarity (rapidfuzz) between "
        "the output and the source (or the closest reference); raw on 0–1.",
        needs_references=True,
        reference="rapidfuzz Levenshtein.normalized_similarity",
        parity_test="tests/metrics/lexical/test_oracles.py::test_surface_measures",
    )
    defaults: ClassVar[dict[str, Any]] = {"reference_mode": "source", "lowercase": False}
    packages = ("rapidfuzz",)

    def score_one(self, pair: Pair) -> ItemScore:
        from rapidfuzz.distance import Levenshtein

        output = pair.output.lower() if self.config["lowercase"] else pair.output
        best = -1.0
        best_distance = 0
        for ref in pair_references(pair):
            ref = ref.lower() if self.config["lowercase"] else ref
            sim = Levenshtein.normalized_similarity(output, ref)
            if sim > best:
                best = sim
                best_distance = Levenshtein.distance(output, ref)
        return ItemScore(100 * best, best, {"distance": best_distance})
