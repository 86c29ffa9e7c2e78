"""The job context as the command line and the executors know it.

`JobContext` and `Job` live in `meaningbench.runtime`, where the engine layers that jobs
drive (training, importers) can take them too; see that module for the one job idiom.
"""

from __future__ import annotations

from meaningbench.runtime import Job, JobContext, JobResult, run_job

__all__ = ["Job", "JobContext", "JobResult", "run_job"]
