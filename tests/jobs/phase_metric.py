"""A test metric that waits, at a chosen phase of a scoring job, for a gate file that the
test never opens, so an interrupt sent then always lands in that phase.

The phase comes from PHASE_ENV:
- `prepare`: in `prepare`, which the job calls while it checks the cached scores;
- `batch`: in every batch after the first, once the first batch is committed;
- `compiled`: as `batch`, but the wait is compiled code that never returns to the
  interpreter, so no Python code runs in the process (no signal handler, no thread);
- `finalizer`: as `batch`, but the wait runs inside a weakref finalizer, where Python
  reports a KeyboardInterrupt as "Exception ignored" and drops it. SQLAlchemy runs such
  callbacks after every commit; here one is made long enough to be hit every time.
On entering the wait it writes the phase's name to the gate path + ".at", for the test to
poll. The wait ends when the job's cancel token is set (as a model metric's batch loop
checks it) unless DEAF_ENV is set: then it also swallows KeyboardInterrupt, as a library
that catches everything would. It ends after WAIT_LIMIT_S in any case, so a lost interrupt
fails a test instead of hanging it.
"""

from __future__ import annotations

import itertools
import os
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from meaningbench.metrics.base import ItemScore, Metric, MetricInfo, Pair
from meaningbench.metrics.registry import register
from meaningbench.runtime import CancelToken
from tests.jobs.gate import DEAF_ENV, GATE_ENV, PHASE_ENV

WAIT_LIMIT_S = 120.0


def _wait(phase: str, cancel: CancelToken | None) -> None:
    deaf = bool(os.environ.get(DEAF_ENV))
    deadline = time.monotonic() + WAIT_LIMIT_S
    while True:
        try:
            _wait_for_gate(phase, cancel, deaf, deadline)
            return
        except KeyboardInterrupt:
            # Deaf means deaf wherever the interrupt lands, in the gate check as well as in
            # the sleep: one that escaped from `gate.exists()` ended a deaf wait at once.
            if not deaf:
                raise


def _wait_for_gate(phase: str, cancel: CancelToken | None, deaf: bool, deadline: float) -> None:
    gate = Path(os.environ[GATE_ENV])
    # Written inside the caller's `try`: a test interrupts only once it sees this file.
    gate.with_name(gate.name + ".at").write_text(phase)
    while not gate.exists() and time.monotonic() < deadline:
        if cancel is not None and cancel.cancelled and not deaf:
            return
        time.sleep(0.01)


def _compiled_wait() -> None:
    """Hours of compiled code that never returns to the interpreter (as loading a large
    library can, for seconds): no Python signal handler or other thread runs meanwhile."""
    gate = Path(os.environ[GATE_ENV])
    gate.with_name(gate.name + ".at").write_text("compiled")
    sum(itertools.repeat(0, 10**13))


class _Holder:
    pass


@register
class PhaseMetric(Metric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="phase_gated",
        label="Phase gated",
        family="lexical",
        description="Output length in characters; waits for a gate at a chosen phase.",
    )
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self.batches = 0

    def prepare(self, pairs: Sequence[Pair]) -> None:
        if os.environ.get(PHASE_ENV) == "prepare":
            _wait("prepare", None)

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        self.batches += 1
        phase = os.environ.get(PHASE_ENV)
        if self.batches > 1 and phase == "batch":
            _wait("batch", cancel)
        elif self.batches > 1 and phase == "compiled":
            _compiled_wait()
        elif self.batches > 1 and phase == "finalizer":
            holder = _Holder()
            weakref.finalize(holder, _wait, "finalizer", cancel)
            del holder  # the wait runs now, as a weakref callback
        return [ItemScore(float(len(p.output)), float(len(p.output))) for p in pairs]
