"""The scene editor's writes: a source's scenes stored as its annotated ones, and scenes
imported from UCCA XML files.

Instant writes (`JobRunner.run_now`); the stored scores SAMSA computed from the old
scenes stay until it runs again, so only the sources' scenes are said to change.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from meaningbench.metrics.structural.scenes import SceneSpec
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote


def save_scenes(
    handle: StudyHandle, source_group: str, specs: Sequence[SceneSpec]
) -> Job[StudyChanges]:
    """Replace the source's annotated scenes with `specs`."""
    study = study_of(handle)
    stored = list(specs)

    def run(_ctx: JobContext) -> StudyChanges:
        from meaningbench.jobs.scene_store import replace_scenes

        with study.session(write=True) as s:
            replace_scenes(s, source_group, stored, origin="manual")
        return StudyChanges.of(scenes=[source_group])

    return run


def import_ucca_files(handle: StudyHandle, paths: Sequence[Path]) -> Job[Wrote[str]]:
    """Import UCCA XML passages as the scenes of the sources they match; the job's value
    is the report in words."""
    study = study_of(handle)
    files = list(paths)

    def run(_ctx: JobContext) -> Wrote[str]:
        from meaningbench.jobs.scene_import import import_ucca

        with study.session(write=True) as s:
            report = import_ucca(s, files)
        return Wrote(report.summary(), StudyChanges.of(scenes=report.groups))

    return run
