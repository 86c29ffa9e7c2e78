"""The scene editor's writes: a source's scenes stored as its annotated ones, and scenes
imported from UCCA XML files.

Instant writes (`JobRunner.run_now`); the stored scores SAMSA computed from the old
scenes stay until it runs again, so only the sources' scenes are said to change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from meaningbench.metrics.structural.scenes import SceneSpec
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.jobs.scene_import import ProposalReport, SceneImportReport


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


def import_ucca_job(handle: StudyHandle, paths: Sequence[Path]) -> Job[Wrote[SceneImportReport]]:
    """Import UCCA XML passages as the scenes of the sources they match; the job's value
    is the import's report. Passages none of which matches a source of the study are
    refused (a `UserError`), so that a wrong file says so; nothing is stored then."""
    study = study_of(handle)
    files = list(paths)

    def run(_ctx: JobContext) -> Wrote[SceneImportReport]:
        from meaningbench.errors import UserError
        from meaningbench.jobs.scene_import import import_ucca

        with study.session(write=True) as s:
            report = import_ucca(s, files)
            if report.passages and not report.matched_groups:
                raise UserError(
                    f"none of the {report.passages} UCCA passage(s) matches a source sentence "
                    f"of {handle.path}; nothing was stored"
                )
        return Wrote(report, StudyChanges.of(scenes=report.groups))

    return run


def import_ucca_files(handle: StudyHandle, paths: Sequence[Path]) -> Job[Wrote[str]]:
    """`import_ucca_job` for the scene editor: the job's value is the report in words."""
    job = import_ucca_job(handle, paths)

    def run(ctx: JobContext) -> Wrote[str]:
        wrote = job(ctx)
        return Wrote(wrote.value.summary(), wrote.changes)

    return run


def propose_scenes_job(
    handle: StudyHandle,
    *,
    overwrite: bool = False,
    propose: Callable[[Sequence[str]], list[list[SceneSpec]]] | None = None,
) -> Job[Wrote[ProposalReport]]:
    """Propose scenes for the sources without any (every source with `overwrite`, replacing
    earlier proposals); the job's value is the report. `propose`: the proposer, by default
    the dependency parser's (`meaningbench.metrics.structural.propose`)."""
    study = study_of(handle)

    def run(_ctx: JobContext) -> Wrote[ProposalReport]:
        from meaningbench.jobs.scene_import import propose_into_study
        from meaningbench.metrics.structural.propose import propose_scenes

        with study.session(write=True) as s:
            report = propose_into_study(s, propose or propose_scenes, overwrite=overwrite)
        # The report does not name the sources given scenes: every screen reloads them.
        return Wrote(report, StudyChanges(everything=True))

    return run
