"""Garbage made anywhere is collected on the GUI thread only (meaningbench.ui.gui_thread_gc)."""

from __future__ import annotations

import gc
import threading

from meaningbench.ui.gui_thread_gc import GuiThreadCollector, collect_on_gui_thread
from meaningbench.ui.launch import create_application


class _Cycle:
    freed_on: list[str] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Cycle.freed_on.append(threading.current_thread().name)


def test_the_app_switches_the_automatic_collector_off(qtbot) -> None:  # noqa: ANN001
    app = create_application()
    collector = app.findChild(GuiThreadCollector)
    assert isinstance(collector, GuiThreadCollector)
    assert collect_on_gui_thread(app) is collector  # one per application
    assert not gc.isenabled()


def test_a_cycle_dropped_on_a_worker_is_freed_on_the_gui_thread(qtbot) -> None:  # noqa: ANN001
    create_application()
    gc.collect()
    _Cycle.freed_on.clear()

    kept: list[list[int]] = []

    def work() -> None:
        _Cycle()
        # Far past every generation's threshold: automatic collection would run here.
        kept.extend([i] for i in range(200_000))

    worker = threading.Thread(target=work, name="worker")
    worker.start()
    worker.join()
    assert _Cycle.freed_on == []
    qtbot.waitUntil(lambda: _Cycle.freed_on != [], timeout=5000)
    assert _Cycle.freed_on == [threading.main_thread().name]
    kept.clear()
