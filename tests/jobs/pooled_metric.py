"""A test metric scored in worker processes, where it waits for a gate file.

In the scoring process each item costs a little time, so the job's probe finds the metric
worth the worker pool; in a worker, each batch waits for the gate named by GATE_ENV (at
most WAIT_LIMIT_S). A test can so kill the scoring process while its workers are busy.
Importing this module registers the metric (in a subprocess, never in the test process).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from meaningbench.metrics.base import ItemScore, Metric, MetricInfo, Pair
from meaningbench.metrics.registry import register
from meaningbench.runtime import CancelToken
from tests.jobs.gate import GATE_ENV

WAIT_LIMIT_S = 120.0
COST_HERE_S = 0.002  # per item in the scoring process: makes the pool look worth it


@register
class PooledMetric(Metric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="pooled",
        label="Pooled",
        family="lexical",
        description="Output length; in worker processes, batches wait for a gate.",
    )
    defaults: ClassVar[dict[str, Any]] = {}
    parallel_safe: ClassVar[bool] = True

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if multiprocessing.parent_process() is None:
            time.sleep(COST_HERE_S * len(pairs))
        else:
            gate = Path(os.environ[GATE_ENV])
            deadline = time.monotonic() + WAIT_LIMIT_S
            while not gate.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return [ItemScore(float(len(p.output)), float(len(p.output))) for p in pairs]
