"""What the Rater QC view and `meaningbench raters --over-time` read: each rater's checks
over consecutive stretches of their ratings (`meaningbench.analysis.rater_timeline`), read in
the background, with the wording both show.

A study without a named rater's rating gives the reason in place of the figures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from meaningbench.analysis.rater_timeline import (
    STRETCH,
    Figure,
    RaterTimeline,
    Stretch,
    Timeline,
    study_timeline,
)
from meaningbench.db.study import open_study
from meaningbench.errors import UserError
from meaningbench.runtime import Job, JobContext

# Named here for the view, which asks only queries.
__all__ = [
    "MEASURES",
    "STRETCH",
    "Figure",
    "Measure",
    "RaterTimeline",
    "Stretch",
    "Timeline",
    "TimelineView",
    "figure_text",
    "figures_line",
    "span_text",
    "stretch_tooltip",
    "timeline_job",
]


@dataclass(frozen=True)
class Measure:
    key: str  # the Stretch field
    label: str  # the plot's axis and the chooser
    threshold: str  # the RaterThresholds field its warning line is drawn at ("" none)
    scale: float  # a share is shown in per cent


MEASURES = (
    Measure("controls", "Controls passed (%)", "min_qc_pass_rate", 100.0),
    Measure("seconds", "Seconds per item (median)", "min_median_seconds", 1.0),
    Measure("agreement", "r with the other raters", "min_agreement", 1.0),
    Measure("same_share", "Ratings on one value (%)", "max_same_share", 100.0),
)


@dataclass(frozen=True)
class TimelineView:
    timeline: Timeline | None
    why_not: str  # why there are no figures ("" when there are)
    thresholds: tuple[tuple[str, float], ...] = ()  # the study's, for the plot's lines


def timeline_job(
    study_path: Path, dimension: str = "meaning", stretch: int = STRETCH
) -> Job[TimelineView]:
    def run(_ctx: JobContext) -> TimelineView:
        from dataclasses import asdict

        from meaningbench.analysis.rater_checks import RaterThresholds
        from meaningbench.annotation.settings import load_settings

        study = open_study(study_path, allow_read_only=True)
        try:
            timeline = study_timeline(study, dimension, stretch)
            with study.session() as s:
                limits = RaterThresholds.from_json(load_settings(s).rater_thresholds)
        except UserError as exc:
            return TimelineView(None, str(exc))
        finally:
            study.close()
        if not timeline.raters:
            why = f"No rater has given {dimension} ratings in this study yet."
            return TimelineView(None, why)
        return TimelineView(timeline, "", tuple(asdict(limits).items()))

    return run


def figure_text(figure: Figure, key: str) -> str:
    """A figure as the table and the command show it; "–" when there is none."""
    if figure.value is None:
        return "–"
    if key == "controls":
        return f"{figure.value:.0%} of {figure.n}"
    if key == "seconds":
        return f"{figure.value:.1f} s"
    if key == "agreement":
        return f"{figure.value:.2f} (n {figure.n})"
    return f"{figure.value:.0%}"


def span_text(s: Stretch) -> str:
    return f"items {s.first}–{s.last}"


def _clock(stamp: str) -> str:
    return stamp[:16].replace("T", " ") if stamp else "?"


def figures_line(s: Stretch) -> str:
    """A stretch's figures on one line: controls, speed, r, one value."""
    controls = (
        f"controls {s.controls_passed} of {s.controls.n} passed"
        if s.controls.value is not None
        else "no control"
    )
    return (
        f"{controls}, {figure_text(s.seconds, 'seconds')}/item, "
        f"r = {figure_text(s.agreement, 'agreement')}, "
        f"one value {figure_text(s.same_share, 'same_share')}"
    )


def stretch_tooltip(s: Stretch) -> str:
    """Everything about one stretch: when, each figure or why it has none, the warnings."""
    lines = [f"{span_text(s)}, {_clock(s.started)} to {_clock(s.ended)}"]
    for label, key, figure in (
        ("Controls passed", "controls", s.controls),
        ("Seconds per item", "seconds", s.seconds),
        ("r with the others", "agreement", s.agreement),
        ("Ratings on one value", "same_share", s.same_share),
    ):
        lines.append(
            f"{label}: {figure_text(figure, key) if figure.value is not None else figure.why_not}"
        )
    lines += [f"! {w}" for w in s.warnings]
    return "\n".join(lines)
