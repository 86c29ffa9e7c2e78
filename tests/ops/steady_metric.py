"""A test metric that keeps a `meaningbench score` process committing batches at a steady
pace, so a test can do its own writes while another process commits all along.

Each item takes at least PACE_S, so the scoring job's chunks (at most 2000 items) are
committed every fraction of a second, and a run of many items lasts far longer than the
test's writes however fast the machine; the test ends the process when it is done.
Scores are the output's length, as in the gated metric.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

from meaningbench.metrics.base import ItemScore, Metric, MetricInfo, Pair
from meaningbench.metrics.registry import register
from meaningbench.runtime import CancelToken

PACE_S = 0.0001


@register
class SteadyMetric(Metric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="steady",
        label="Steady",
        family="lexical",
        description="Output length in characters, at a steady pace per item.",
    )
    defaults: ClassVar[dict[str, Any]] = {}

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        time.sleep(PACE_S * len(pairs))
        return [ItemScore(float(len(p.output)), float(len(p.output))) for p in pairs]
