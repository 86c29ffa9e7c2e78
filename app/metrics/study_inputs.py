"""What a metric may read of the study it scores besides the pairs' texts.

A metric never opens the study file: the job that scores it hands it an object with these
reads (`Metric.use_study`; `meaningbench.jobs.study_inputs` implements them over the study),
so the metrics stay below the study's tables and scores in the layers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from meaningbench.metrics.base import Pair
from meaningbench.metrics.structural.scenes import SceneSpec


class StudyInputs(Protocol):
    def references(self, item_ids: Sequence[int]) -> list[str]:
        """The non-blank human references of the items, in item id order (BERTScore's
        `idf_from=references`)."""
        ...

    def scenes(self, pairs: Sequence[Pair], origin: str) -> dict[int, list[SceneSpec]]:
        """The scenes of each pair's source keyed by item id, found by the item's stored
        source group, else by its source text (SAMSA); sources without scenes are absent."""
        ...

    def newest_scores(
        self, metric: str, config_hash: str, item_ids: Sequence[int]
    ) -> dict[int, tuple[float | None, str | None]]:
        """The score that counts of a (metric, config) per item, as (value, input hash)
        (BLEU-SAMSA's means)."""
        ...
