"""Run a job in a terminal with a tqdm progress bar; Ctrl+C cancels it cleanly.

Under the `meaningbench` command, Ctrl+C also sets the job's cancel token
(meaningbench.interrupts), so the job stops at its next check even where the
KeyboardInterrupt itself is lost.
"""

from __future__ import annotations

import sys
from typing import TypeVar

from meaningbench.interrupts import cancelling
from meaningbench.runtime import Cancelled, Job, JobContext, Progress

T = TypeVar("T")


def run_with_progress_bar(job: Job[T], *, description: str, quiet: bool = False) -> T:
    from tqdm import tqdm

    bar = (
        None if quiet else tqdm(desc=description, unit="item", file=sys.stderr, dynamic_ncols=True)
    )

    def report(p: Progress) -> None:
        if bar is None:
            return
        if p.total is not None and bar.total != p.total:
            bar.total = p.total
        bar.n = p.done
        if p.message:
            bar.set_postfix_str(p.message, refresh=False)
        bar.refresh()

    def notice(message: str) -> None:
        if bar is None:
            print(f"meaningbench: {message}", file=sys.stderr, flush=True)
        else:
            bar.write(f"meaningbench: {message}", file=sys.stderr)

    ctx = JobContext(report=report, on_notice=notice)
    try:
        with cancelling(ctx.cancel):
            return job(ctx)
    except KeyboardInterrupt:
        ctx.cancel.cancel()
        raise Cancelled() from None
    finally:
        if bar is not None:
            bar.close()
