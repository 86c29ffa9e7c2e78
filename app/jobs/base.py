"""The one pattern for background work: a function taking a JobContext.

The job reports progress and checks for cancellation through the context; it opens its own
database session. The CLI drives it with a terminal progress bar (`app.jobs.terminal`), the
UI on a worker thread whose signals carry progress to the GUI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.runtime import CancelToken, Progress, ProgressFn, no_progress


@dataclass
class JobContext:
    cancel: CancelToken = field(default_factory=CancelToken)
    report: ProgressFn = no_progress
    # A line for the user beside the progress (the terminal prints it on stderr): what the
    # job waits for, what it leaves to another process.
    notice: Callable[[str], None] = field(default=lambda _message: None)
    # Progress callbacks are throttled so a fast job does not flood a terminal or a GUI.
    min_interval_s: float = 0.05
    _last: float = field(default=0.0, repr=False)

    def progress(
        self, done: int, total: int | None, message: str = "", *, force: bool = False
    ) -> None:
        now = time.monotonic()
        if (
            force
            or now - self._last >= self.min_interval_s
            or (total is not None and done >= total)
        ):
            self._last = now
            self.report(Progress(done, total, message))

    def check(self) -> None:
        self.cancel.check()


Job = Callable[[JobContext], Any]
