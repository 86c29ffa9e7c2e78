"""A command runs an op's job to its end with Ctrl+C as its cancel, like any job of the
command line: the first Ctrl+C sets the job's cancel token, which nothing can lose."""

from __future__ import annotations

import subprocess
import sys

from meaningbench.commands._common import run_op, written
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

# A real SIGINT sent to a process of its own while the op's job runs (the handler is
# process-wide state, so not in the test process); the job says what its token said.
# SIGINT is set to Python's own handler first, as in a terminal: a test run started in the
# background inherits it ignored, and `handled` leaves an ignored SIGINT ignored.
PRESSED = """
import os, signal
from meaningbench.commands._common import run_op
from meaningbench.interrupts import handled

signal.signal(signal.SIGINT, signal.default_int_handler)

def job(ctx):
    before = ctx.cancel.cancelled
    try:
        os.kill(os.getpid(), signal.SIGINT)
    except KeyboardInterrupt:
        pass
    return before, ctx.cancel.cancelled

with handled():
    print(run_op(job))
"""


def test_ctrl_c_sets_the_cancel_token_of_the_op_running() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PRESSED], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(False, True)"


def test_an_op_runs_to_its_end_and_written_gives_its_value() -> None:
    seen: list[JobContext] = []

    def job(ctx: JobContext) -> Wrote[str]:
        seen.append(ctx)
        return Wrote("report", StudyChanges(settings=True))

    assert written(job) == "report"
    assert run_op(lambda ctx: 7) == 7
    assert len(seen) == 1 and not seen[0].cancel.cancelled
