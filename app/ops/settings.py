"""The study's settings: one setting (its name), the annotation protocol's sections, and
the study settings dialog's save of both, broadcast once.

Instant writes: the screens run them on the GUI thread through `JobRunner.run_now`, whose
caller gets a refusal (`UserError`) to show where the user is looking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from meaningbench.annotation.settings import AnnotationSettings, load_settings, save_settings
from meaningbench.errors import UserError
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import EMPTY, StudyChanges, Wrote

if TYPE_CHECKING:
    from meaningbench.annotation.protocols import ProtocolChoice

SETTINGS = StudyChanges(settings=True)

# Which fields of `AnnotationSettings` each section of the settings widget writes.
Fields = dict[str, tuple[str, ...]]


def set_setting(handle: StudyHandle, key: str, value: Any) -> Job[StudyChanges]:
    """Store one study setting (None clears it to its default)."""

    study = study_of(handle)

    def run(_ctx: JobContext) -> StudyChanges:
        from meaningbench.db.models import StudySetting

        with study.session(write=True) as s:
            row = s.get(StudySetting, key)
            if row is None:
                s.add(StudySetting(key=key, value=value))
            else:
                row.value = value
        return SETTINGS

    return run


def store_settings(
    handle: StudyHandle, mine: AnnotationSettings, fields: Fields
) -> Job[StudyChanges]:
    """Write the given fields of `mine` over what the file holds now (UserError if refused).

    Fields of sections not shown keep the file's values: another tab of the dialog may have
    changed them since the widget was opened.
    """
    study = study_of(handle)

    def run(_ctx: JobContext) -> StudyChanges:
        from meaningbench.annotation.protocols import check_selection_fits

        with study.session(write=True) as s:
            stored = load_settings(s)
            if mine.selection != stored.selection and any(
                "selection" in n for n in fields.values()
            ):
                check_selection_fits(s, mine.selection)
            for names in fields.values():
                for name in names:
                    setattr(stored, name, getattr(mine, name))
            save_settings(s, stored)
        return SETTINGS

    return run


def save_study_settings(
    handle: StudyHandle,
    key: str,
    value: Any,
    sections: Sequence[tuple[AnnotationSettings, Fields]],
) -> Job[Wrote[list[UserError | None]]]:
    """The settings dialog's save: the setting, then each section on its own.

    A refused section (a scale that has ratings) keeps the file's values and its refusal is
    returned in its place (None where stored), so the others are still stored; a refused
    setting raises before any section is written.
    """

    def run(ctx: JobContext) -> Wrote[list[UserError | None]]:
        set_setting(handle, key, value)(ctx)
        refused: list[UserError | None] = []
        for mine, fields in sections:
            try:
                store_settings(handle, mine, fields)(ctx)
            except UserError as exc:
                refused.append(exc)
            else:
                refused.append(None)
        return Wrote(refused, SETTINGS)

    return run


def set_language(handle: StudyHandle, code: str) -> Job[Wrote[tuple[str, str]]]:
    """Set the study's language (a checked ISO 639-1 code); the job's value is the old code
    and the new one. Metrics that depend on it score under the new one from the next run."""
    study = study_of(handle)

    def run(_ctx: JobContext) -> Wrote[tuple[str, str]]:
        from meaningbench.datasets.language import set_study_language

        old, new = set_study_language(study, code)
        return Wrote((old, new), SETTINGS if new != old else EMPTY)

    return run


def set_protocol(
    handle: StudyHandle, protocol: str | None = None, **options: Any
) -> Job[Wrote[ProtocolChoice]]:
    """Store the annotation protocol and its options, None leaving one as it is (see
    `meaningbench.annotation.protocols.set_protocol`); the job's value is the choice now."""
    study = study_of(handle)

    def run(_ctx: JobContext) -> Wrote[ProtocolChoice]:
        from meaningbench.annotation.protocols import set_protocol as store

        return Wrote(store(study, protocol, **options), SETTINGS)

    return run


def add_rater_thresholds(handle: StudyHandle, thresholds: Mapping[str, float]) -> Job[StudyChanges]:
    """Set the rater checks' thresholds named in `thresholds`, keeping the others."""
    study = study_of(handle)
    new = dict(thresholds)

    def run(_ctx: JobContext) -> StudyChanges:
        with study.session(write=True) as s:
            stored = load_settings(s)
            stored.rater_thresholds = {**stored.rater_thresholds, **new}
            save_settings(s, stored)
        return SETTINGS

    return run
