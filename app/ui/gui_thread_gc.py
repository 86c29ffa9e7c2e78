"""Python's cyclic garbage collection, on the GUI thread only.

The cyclic collector runs in whichever thread happens to allocate when a generation's
threshold is crossed. A Qt object whose Python wrapper dies in a reference cycle is then
destroyed on that thread: on a job's worker thread (busy reading a study) that deletes
widgets, timers and thread pools off the GUI thread, which Qt does not allow and which can
crash the whole process. So the automatic collector is switched off and the GUI thread
collects on a timer, generation by generation, with the thresholds Python would have used.
Worker threads then never collect; the garbage they make waits at most one tick.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QObject, QTimer

TICK_MS = 1000


class GuiThreadCollector(QObject):
    """Collects what is due on each tick of a timer that lives in the GUI thread."""

    def __init__(self, parent: QObject, *, tick_ms: int = TICK_MS) -> None:
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.collect_due)
        gc.disable()
        self._timer.start(tick_ms)

    def collect_due(self) -> None:
        """What the automatic collector would have done by now: a young generation when its
        count passed its threshold, an older one only when that one's did too."""
        counts = gc.get_count()
        for generation in range(3):
            if counts[generation] <= self.threshold[generation]:
                return
            gc.collect(generation)


def collect_on_gui_thread(app: QCoreApplication) -> GuiThreadCollector:
    """Install the collector on `app` (once: a second call returns the first)."""
    existing = app.findChild(GuiThreadCollector)
    if isinstance(existing, GuiThreadCollector):
        return existing
    return GuiThreadCollector(app)
