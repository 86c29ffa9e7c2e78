"""Build the demo study: the window's demo button and `meaningbench demo`.

The study is a new file, built under a temporary name and moved into place when complete
(see `meaningbench.datasets.demo`); one already there is left as it is, never replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

__all__ = ["DemoStudy", "build_demo_job"]


@dataclass(frozen=True)
class DemoStudy:
    path: Path
    built: bool  # False: a file was there already and was left alone


def build_demo_job(path: Path | None = None) -> Job[Wrote[DemoStudy]]:
    """The demo study at `path` (default: the user's studies folder), built if missing.

    The job's value says where it is and whether this job built it. It changes no study a
    screen shows (the demo is a file of its own until it is opened), so no changes."""

    def run(_ctx: JobContext) -> Wrote[DemoStudy]:
        # Imported here: the importer loads with it, and the window starts without it.
        from meaningbench.datasets.demo import build_demo_study, default_demo_path

        target = path if path is not None else default_demo_path()
        existed = target.exists()
        built = build_demo_study(target)
        return Wrote(DemoStudy(built, built=not existed), StudyChanges())

    return run
