"""What the annotation screens ask of a study: who rates, the settings (stored by
`meaningbench.ops.settings`).

The rating screens step through the rater's queue with a cursor
(`meaningbench.queries.rating_cursor`); everything else the annotation widgets read goes
through here, as plain dataclasses, so the widgets need neither SQLAlchemy nor the schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from meaningbench.annotation.model import Scale, ShownItem
from meaningbench.annotation.overview import AnnotatorSummary, annotator_overview
from meaningbench.annotation.practice import (
    Feedback,
    Practice,
    PracticeStanding,
    read_practice_file,
)
from meaningbench.annotation.proposals import (
    PrefillSource,
    ProposalFate,
    ProposedSpan,
    prefill_candidates,
)
from meaningbench.annotation.selection import done_runs
from meaningbench.annotation.settings import (
    AFTER_FAILED_PRACTICE,
    MAX_QC_PER_100,
    PROTOCOLS,
    QC_KINDS,
    SCORELESS_SELECTIONS,
    SELECTIONS,
    AnnotationSettings,
    DimensionConfig,
    QCMix,
    load_settings,
)
from meaningbench.annotation.side_by_side import ShownUnit
from meaningbench.annotation.spans import Span, make_span, words
from meaningbench.db.models import Annotator, Dataset, PracticeItem
from meaningbench.queries.files import StudyHandle, study_of

# Besides its questions, the module names what the rating screens show (an item, a unit of
# side-by-side outputs, a scale, a practice item and its feedback, error spans over a
# text's words) and the settings' vocabulary, as `meaningbench.annotation` defines them;
# and the reader of a practice file, whose rows `meaningbench.ops.practice` adds.
__all__ = [
    "MAX_QC_PER_100",
    "PROTOCOLS",
    "QC_KINDS",
    "SCORELESS_SELECTIONS",
    "SELECTIONS",
    "AnnotationSettings",
    "AnnotatorChoices",
    "AFTER_FAILED_PRACTICE",
    "AnnotatorSummary",
    "DimensionConfig",
    "PrefillSource",
    "ProposalFate",
    "ProposedSpan",
    "Feedback",
    "Practice",
    "QCMix",
    "Scale",
    "ShownItem",
    "ShownUnit",
    "Span",
    "PracticeStanding",
    "SettingsView",
    "annotator_choices",
    "protocol_of",
    "rater_warnings",
    "settings_view",
    "make_span",
    "read_practice_file",
    "words",
]


@dataclass(frozen=True)
class AnnotatorChoices:
    """The raters to continue as, and the names taken by imported rating sources."""

    raters: list[AnnotatorSummary]
    taken: frozenset[str]


def annotator_choices(handle: StudyHandle) -> AnnotatorChoices:
    study = study_of(handle)
    with study.session() as s:
        raters = annotator_overview(s)
        taken = frozenset(s.scalars(select(Annotator.name).where(Annotator.kind != "named")))
    return AnnotatorChoices(raters=raters, taken=taken)


def rater_warnings(handle: StudyHandle, dimension: str | None = None) -> dict[str, list[str]]:
    """The coordinator's warnings per rater (only raters with warnings), on the first active
    dimension unless named; empty for a study without one."""
    study = study_of(handle)
    from meaningbench.analysis.rater_checks import study_rater_checks

    with study.session() as s:
        settings = load_settings(s)
    active = settings.active_dimensions()
    name = dimension or (active[0].name if active else None)
    if name is None:
        return {}
    return {c.rater: c.warnings for c in study_rater_checks(study, name) if c.warnings}


def protocol_of(handle: StudyHandle) -> str:
    """The study's annotation protocol: da, esa, sxs or likert."""
    study = study_of(handle)
    with study.session() as s:
        return load_settings(s).protocol


@dataclass(frozen=True)
class SettingsView:
    settings: AnnotationSettings
    datasets: list[str]  # every dataset's name, sorted
    # The stored judge configurations whose error spans may pre-fill the ESA screen.
    prefill_sources: list[PrefillSource]
    # The finished metric runs (labels) a selection strategy may read the scores of.
    selection_runs: list[str]
    # The study's practice items: what a practice pass mark is out of.
    practice_items: int = 0


def settings_view(handle: StudyHandle) -> SettingsView:
    study = study_of(handle)
    with study.session() as s:
        settings = load_settings(s)
        datasets = list(s.scalars(select(Dataset.name).order_by(Dataset.name)))
        sources = prefill_candidates(s)
        runs = [r.label for r in done_runs(s)]
        practice = int(s.scalar(select(func.count()).select_from(PracticeItem)) or 0)
    return SettingsView(
        settings=settings,
        datasets=datasets,
        prefill_sources=sources,
        selection_runs=runs,
        practice_items=practice,
    )
