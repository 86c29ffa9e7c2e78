"""The Campaign page's write: top-up kits of the items still short of their k ratings.

The kits are `meaningbench kit --top-up`'s own (`meaningbench.kits.making`): each short
item goes to as many of the chosen raters as it lacks, never to one who rated it or holds
it already, and the lead's study records the kits and the raters' new queue entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from meaningbench.kits.adaptive import TopUpChoice
from meaningbench.kits.making import MadeKit, make_kits
from meaningbench.queries.files import open_study
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

__all__ = ["MadeKit", "TopUpChoice", "top_up_job"]


def top_up_job(
    study_path: Path, raters: Sequence[str], out: Path, choice: TopUpChoice | None = None
) -> Job[Wrote[list[MadeKit]]]:
    """Write top-up kits for `raters` into `out`; the job's value is the kits written. The
    kits are recorded among the study's settings and the raters' queues grow. `choice`:
    which short items, in which order (default: all, by id)."""
    chosen = list(raters)

    def run(ctx: JobContext) -> Wrote[list[MadeKit]]:
        ctx.progress(0, None, f"Making top-up kits for {', '.join(chosen)}")
        study = open_study(study_path)
        try:
            made = make_kits(study, chosen, out, top_up=True, choice=choice)
        finally:
            study.close()
        return Wrote(made, StudyChanges(settings=True))

    return run
