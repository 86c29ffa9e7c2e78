"""The one pattern for background work: a function taking a JobContext.

The job reports progress and checks for cancellation through the context; it opens its own
database session. The CLI drives it with a terminal progress bar (`meaningbench.jobs.terminal`), the
UI on a worker thread whose signals carry progress to the GUI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from meaningbench.runtime import CancelToken, Progress, ProgressFn, no_progress


@dataclass
class JobContext:
    cancel: CancelToken = field(default_factory=CancelToken)
    report: ProgressFn = no_progress
    # Where `notice` lines go (the terminal prints them on stderr); without one they
    # become the progress message, which the app shows beside its progress bar.
    on_notice: Callable[[str], None] | None = None
    # Progress callbacks are throttled so a fast job does not flood a terminal or a GUI.
    min_interval_s: float = 0.05
    _last: float = field(default=0.0, repr=False)
    _shown: Progress = field(default=Progress(0, None), repr=False)

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
            self._shown = Progress(done, total, message)
            self.report(self._shown)

    def notice(self, message: str) -> None:
        """A line for the user beside the progress: what the job waits for, what it leaves
        to another process."""
        if self.on_notice is not None:
            self.on_notice(message)
        else:
            self.report(Progress(self._shown.done, self._shown.total, message))

    def check(self) -> None:
        self.cancel.check()


Job = Callable[[JobContext], Any]
