"""The scene editor's write: a source's scenes, stored as its annotated ones.

An instant write (`JobRunner.run_now`); the stored scores SAMSA computed from the old
scenes stay until it runs again, so only the source's scenes are said to change.
"""

from __future__ import annotations

from collections.abc import Sequence

from meaningbench.metrics.structural.scenes import SceneSpec
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges


def save_scenes(handle: StudyHandle, source_group: str, specs: Sequence[SceneSpec]) -> Job:
    """Replace the source's annotated scenes with `specs`."""
    study = study_of(handle)
    stored = list(specs)

    def run(_ctx: JobContext) -> StudyChanges:
        from meaningbench.jobs.scene_store import replace_scenes

        with study.session() as s:
            replace_scenes(s, source_group, stored, origin="manual")
        return StudyChanges.of(scenes=[source_group])

    return run
