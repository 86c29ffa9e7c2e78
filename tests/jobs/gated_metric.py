"""A test metric whose second and later batches wait for a gate file.

A test runs the real `meaningbench score` in a subprocess with this metric registered, waits
until the first batch is committed and interrupts the process while the second batch waits:
the interrupt always lands while work is left, however fast the machine. A gate that never
opens ends the wait after WAIT_LIMIT_S, so a lost interrupt fails the test instead of hanging.
"""

from __future__ import annotations

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


@register
class GatedMetric(Metric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="gated",
        label="Gated",
        family="lexical",
        description="Output length in characters; batches after the first wait for a gate.",
    )
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self.batches = 0

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        self.batches += 1
        if self.batches > 1:
            gate = Path(os.environ[GATE_ENV])
            deadline = time.monotonic() + WAIT_LIMIT_S
            while not gate.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return [ItemScore(float(len(p.output)), float(len(p.output))) for p in pairs]
