"""What the annotation screens ask of a study: who rates, the settings, storing them.

The rating screen itself talks to `meaningbench.annotation.session.AnnotationSession`;
everything else the annotation widgets read or write goes through here, as plain
dataclasses, so the widgets need neither SQLAlchemy nor the schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from meaningbench.annotation.overview import AnnotatorSummary, annotator_overview
from meaningbench.annotation.settings import AnnotationSettings, load_settings, save_settings
from meaningbench.db.models import Annotator, Dataset
from meaningbench.db.study import Study

__all__ = [
    "AnnotatorChoices",
    "AnnotatorSummary",
    "SettingsView",
    "Study",
    "annotator_choices",
    "protocol_of",
    "rater_warnings",
    "settings_view",
    "store_settings",
]


@dataclass(frozen=True)
class AnnotatorChoices:
    """The raters to continue as, and the names taken by imported rating sources."""

    raters: list[AnnotatorSummary]
    taken: frozenset[str]


def annotator_choices(study: Study) -> AnnotatorChoices:
    with study.session() as s:
        raters = annotator_overview(s)
        taken = frozenset(s.scalars(select(Annotator.name).where(Annotator.kind != "named")))
    return AnnotatorChoices(raters=raters, taken=taken)


def rater_warnings(study: Study, dimension: str | None = None) -> dict[str, list[str]]:
    """The coordinator's warnings per rater (only raters with warnings), on the first active
    dimension unless named; empty for a study without one."""
    from meaningbench.analysis.rater_checks import study_rater_checks

    with study.session() as s:
        settings = load_settings(s)
    active = settings.active_dimensions()
    name = dimension or (active[0].name if active else None)
    if name is None:
        return {}
    return {c.rater: c.warnings for c in study_rater_checks(study, name) if c.warnings}


def protocol_of(study: Study) -> str:
    """The study's annotation protocol: da, esa, sxs or likert."""
    with study.session() as s:
        return load_settings(s).protocol


@dataclass(frozen=True)
class SettingsView:
    settings: AnnotationSettings
    datasets: list[str]  # every dataset's name, sorted


def settings_view(study: Study) -> SettingsView:
    with study.session() as s:
        settings = load_settings(s)
        datasets = list(s.scalars(select(Dataset.name).order_by(Dataset.name)))
    return SettingsView(settings=settings, datasets=datasets)


def store_settings(
    study: Study, mine: AnnotationSettings, fields_by_section: dict[str, tuple[str, ...]]
) -> None:
    """Write the given fields of `mine` over what the file holds now (UserError if invalid).

    Fields of sections not shown keep the file's values: another tab of the dialog may have
    changed them since the widget was opened.
    """
    with study.session() as s:
        st = load_settings(s)
        for names in fields_by_section.values():
            for name in names:
                setattr(st, name, getattr(mine, name))
        save_settings(s, st)
