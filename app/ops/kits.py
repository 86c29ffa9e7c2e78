"""Rater kits from the app: File ▸ Make rater kits…, File ▸ Collect rater kits… and, in a
kit opened in rater mode, Send back. The work is `meaningbench.kits`'; these are its jobs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from meaningbench.analysis.rater_checks import RaterCheck
from meaningbench.core.atomic_file import files_in_place
from meaningbench.db.study import copy_study
from meaningbench.errors import UserError
from meaningbench.kits.adaptive import TopUpChoice
from meaningbench.kits.collecting import CollectReport, KitReturn, collect_kits
from meaningbench.kits.making import KitsInTheWay, MadeKit, make_kits, parse_raters
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.queries.rater_kit import KIT_SUFFIX, kit_marker, kit_practice, kit_ratings
from meaningbench.runtime import Job, JobContext
from meaningbench.runtime.changes import StudyChanges, Wrote

__all__ = [
    "CollectReport",
    "KitReturn",
    "KitsInTheWay",
    "MadeKit",
    "SentBack",
    "collect_job",
    "controls_passed",
    "make_kits_job",
    "send_back_job",
]

# Where Send back puts the returned kit unless the rater chooses another folder: a folder
# beside the kit, so the file to return is never the one the app holds open.
SEND_BACK_FOLDER = "Send back"


@dataclass(frozen=True)
class SentBack:
    path: Path
    rater: str
    ratings: int


def make_kits_job(
    study: StudyHandle,
    raters: str,
    out: Path,
    *,
    top_up: bool = False,
    replace: bool = False,
    choice: TopUpChoice | None = None,
) -> Job[Wrote[list[MadeKit]]]:
    """Write a kit per rater (`raters`: names separated by commas) into `out`; the job's
    value is the kits made. The lead's study records them (and a top-up's queues). Kits
    without ratings already there under the new names fail the job (`KitsInTheWay`)
    unless `replace`; a kit with ratings is never replaced. `choice`: which short items a
    top-up hands out (`meaningbench.kits.adaptive`)."""

    def run(ctx: JobContext) -> Wrote[list[MadeKit]]:
        names = parse_raters(raters)
        ctx.progress(0, len(names), "Making the kits")
        made = make_kits(study_of(study), names, out, top_up=top_up, replace=replace, choice=choice)
        return Wrote(made, StudyChanges(settings=True, everything=top_up))

    return run


def collect_job(study: StudyHandle, folder: Path) -> Job[Wrote[CollectReport]]:
    """Merge every kit in `folder` into the open study; the job's value is the report.
    The ratings of many items may come in: every screen reloads."""

    def run(ctx: JobContext) -> Wrote[CollectReport]:
        report = collect_kits(
            study_of(study), folder, on_kit=lambda p: ctx.log(f"Collecting {p.name}")
        )
        return Wrote(report, StudyChanges(everything=True))

    return run


def controls_passed(check: RaterCheck | None) -> str:
    """A returned kit's controls in words: the share of identical and unrelated controls
    passed (the rater checks' own figures), or that none was rated."""
    if check is None:
        return "no ratings"
    parts = [
        f"{label} {rate:.0%}"
        for label, rate in (
            ("identical", check.identical_pass),
            ("unrelated", check.unrelated_pass),
        )
        if math.isfinite(rate)
    ]
    return ", ".join(parts) if parts else "no control rated"


def default_send_back_folder(study: StudyHandle) -> Path:
    return study.path.parent / SEND_BACK_FOLDER


def send_back_job(study: StudyHandle, folder: Path) -> Job[SentBack]:
    """Copy the open kit, with every rating and practice answer in it, into `folder` under
    its own name (through SQLite's backup API: the open file is never copied as bytes). The
    copy takes its place whole (an earlier one there is replaced). A kit with practice
    answers and no rating goes too: the lead sees why its rater could not start. The job's
    value says where it went."""

    def run(_ctx: JobContext) -> SentBack:
        marker = kit_marker(study)
        if marker is None:
            raise UserError(f"{study.path.name} is not a rater kit: there is nothing to send back.")
        rated = kit_ratings(study)
        if rated == 0 and kit_practice(study) == 0:
            raise UserError("Nothing to send back yet: rate at least one item first.")
        name = study.path.name if study.path.suffix == KIT_SUFFIX else f"{marker.rater}{KIT_SUFFIX}"
        target = folder / name
        if target.resolve() == study.path.resolve():
            raise UserError(
                f"{folder} is the folder the kit is opened from: choose another folder "
                f"(for example {default_send_back_folder(study)})."
            )
        with files_in_place(folder) as staging:
            copy_study(study.path, staging / name)
        return SentBack(target, marker.rater, rated)

    return run
