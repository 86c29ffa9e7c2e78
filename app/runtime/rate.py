"""Items per second and time left for a progress bar, from (time, done) samples.

The rate is taken over a sliding window rather than since the start, so that a slow first
batch (a model loading) does not poison the estimate for the rest of the run.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass
class RateMeter:
    window_s: float = 10.0
    _samples: deque[tuple[float, int]] = field(default_factory=deque)

    def reset(self) -> None:
        self._samples.clear()

    def add(self, t: float, done: int) -> None:
        if self._samples and done < self._samples[-1][1]:
            self._samples.clear()  # a new phase started counting from zero
        self._samples.append((t, done))
        # Keep one sample older than the window so the rate spans the whole window.
        while len(self._samples) > 2 and t - self._samples[1][0] >= self.window_s:
            self._samples.popleft()

    def rate(self) -> float | None:
        """Items per second over the window; None until two distinct samples exist."""
        if len(self._samples) < 2:
            return None
        (t0, d0), (t1, d1) = self._samples[0], self._samples[-1]
        if t1 <= t0:
            return None
        return (d1 - d0) / (t1 - t0)

    def eta_s(self, total: int | None) -> float | None:
        rate = self.rate()
        if total is None or rate is None or rate <= 0 or not self._samples:
            return None
        return max(0.0, (total - self._samples[-1][1]) / rate)


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def format_rate(rate: float | None) -> str:
    if rate is None:
        return "– items/s"
    if rate >= 100:
        return f"{rate:,.0f} items/s"
    return f"{rate:.1f} items/s"
