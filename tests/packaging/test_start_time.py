"""`packaging/start_time.py`: the CPU time of a running program, read from /proc.

The start-up figures of the bundle (`make bundle-check`, resources/docs/install.md) give the
CPU time a program used until its window showed, beside the wall time that the machine's
other work stretches. These tests check that reading against a child process whose work is
known: it burns CPU for a while, then sleeps.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "packaging" / "start_time.py"
BURN_S = 0.6
BUSY_THEN_IDLE = f"""
import sys, time
end = time.process_time() + {BURN_S}
while time.process_time() < end:
    pass
print("burnt", flush=True)
time.sleep(60)
"""


def load_start_time():  # noqa: ANN201 - the module
    spec = importlib.util.spec_from_file_location("start_time", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")
def test_cpu_time_of_a_running_process_counts_its_work_not_its_waiting() -> None:
    start_time = load_start_time()
    cmd = [sys.executable, "-c", BUSY_THEN_IDLE]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "burnt"
            time.sleep(0.5)  # idle time must not count
            cpu = start_time.cpu_seconds(proc.pid)
        finally:
            proc.kill()
    # The interpreter's own start adds a little; the half second of sleep adds nothing.
    assert BURN_S - 0.05 <= cpu <= BURN_S + 0.45


def test_summary_gives_medians_ranges_and_load() -> None:
    start_time = load_start_time()
    figures = [(2.0, 0.5, 3.0), (1.0, 0.7, 4.5), (4.0, 0.6, 3.5)]
    runs = [start_time.Start(wall_s=w, cpu_s=c, load=load) for w, c, load in figures]
    text = start_time.summary("cold MeaningBench", runs)
    assert text.startswith("cold MeaningBench: to the window 2.00 s median (1.00–4.00)")
    assert "CPU 0.60 s median (0.50–0.70); 3 runs, load average 3.0–4.5" in text
