"""Choosing a study's annotation protocol (da, esa, sxs, likert) and how it is described."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from meaningbench.annotation.practice import PassMark
from meaningbench.annotation.proposals import PrefillSource, find_prefill
from meaningbench.annotation.selection import done_runs, resolve_runs
from meaningbench.annotation.settings import (
    PROTOCOLS,
    SCORELESS_SELECTIONS,
    SELECTIONS,
    AnnotationSettings,
    check_selection,
    load_settings,
    save_settings,
)
from meaningbench.db.models import Item, PracticeItem
from meaningbench.db.study import Study
from meaningbench.errors import UserError


@dataclass(frozen=True)
class ProtocolChoice:
    """What a study's raters are asked to do, as `info` and the dataset card say it."""

    protocol: str
    description: str
    hidden_number: bool
    source_spans: bool
    likert_labels: tuple[str, ...]
    # esa: the stored judge configuration whose error spans are pre-filled; None: none.
    prefill: PrefillSource | None = None
    # Which items the queues ask first, and from which metric runs' scores (None: all).
    selection: str = "random"
    selection_metrics: tuple[str, ...] | None = None
    # Kits keep each output's system name (by default they leave it out: raters rate blind).
    show_systems: bool = False
    # The practice pass mark (None: practice is one pass and nothing depends on it), and
    # the study's number of practice items it is out of.
    pass_mark: PassMark | None = None
    practice_items: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "protocol": self.protocol,
            "description": self.description,
            "hidden_number": self.hidden_number,
            "show_systems": self.show_systems,
        }
        if self.protocol == "esa":
            out["source_spans"] = self.source_spans
            out["prefill_spans"] = None if self.prefill is None else self.prefill.to_json()
        if self.protocol == "likert":
            out["likert_labels"] = list(self.likert_labels)
        out["practice_items"] = self.practice_items
        out["practice_pass_mark"] = None if self.pass_mark is None else asdict(self.pass_mark)
        out["selection"] = self.selection
        out["selection_metrics"] = (
            None if self.selection_metrics is None else list(self.selection_metrics)
        )
        return out

    def line(self) -> str:
        extras = []
        if self.hidden_number:
            extras.append("numbers hidden")
        if self.protocol == "esa" and self.source_spans:
            extras.append("omissions marked in the source")
        if self.protocol == "esa" and self.prefill is not None:
            extras.append(f"error spans pre-filled from {self.prefill.describe()}")
        if self.show_systems:
            extras.append("system names kept in kits")
        tail = f" ({', '.join(extras)})" if extras else ""
        return f"{self.protocol} — {self.description}{tail}"

    def practice_line(self) -> str:
        if self.pass_mark is None:
            n = self.practice_items
            return (
                "no practice items"
                if not n
                else f"{n} practice item{'' if n == 1 else 's'}, no pass mark"
            )
        return f"pass mark: {self.pass_mark.text(self.practice_items)}"

    def selection_line(self) -> str:
        runs = "every finished metric run"
        if self.selection_metrics is not None:
            runs = ", ".join(self.selection_metrics)
        if self.selection in SCORELESS_SELECTIONS:
            return f"{self.selection} — {SELECTIONS[self.selection]}"
        return f"{self.selection} — {SELECTIONS.get(self.selection, 'unknown')} (scores of {runs})"


def describe(settings: AnnotationSettings, practice_items: int = 0) -> ProtocolChoice:
    mark = None
    if settings.practice_pass_items is not None:
        mark = PassMark(
            settings.practice_pass_items,
            float(settings.practice_within),
            settings.practice_attempts,
            settings.practice_after_failed,
        )
    return ProtocolChoice(
        protocol=settings.protocol,
        description=PROTOCOLS.get(settings.protocol, "unknown"),
        hidden_number=settings.hidden_number,
        source_spans=settings.esa_source_spans,
        likert_labels=tuple(settings.likert_labels),
        prefill=settings.esa_prefill,
        selection=settings.selection,
        selection_metrics=(
            None if settings.selection_metrics is None else tuple(settings.selection_metrics)
        ),
        show_systems=settings.show_systems,
        pass_mark=mark,
        practice_items=practice_items,
    )


def _practice_items(s: Session) -> int:
    return int(s.scalar(select(func.count()).select_from(PracticeItem)) or 0)


def study_protocol(study: Study) -> ProtocolChoice:
    with study.session() as s:
        return describe(load_settings(s), _practice_items(s))


def set_protocol(
    study: Study,
    protocol: str | None = None,
    *,
    hidden_number: bool | None = None,
    source_spans: bool | None = None,
    likert_labels: list[str] | None = None,
    prefill: str | Literal[False] | None = None,
    selection: str | None = None,
    selection_metrics: list[str] | Literal[False] | None = None,
    show_systems: bool | None = None,
    practice: PracticeOptions | None = None,
) -> ProtocolChoice:
    """Store the study's protocol and its options (None: leave as it is). `prefill` names a
    stored llm_judge run (its label) whose error spans pre-fill the ESA screen; False: none.
    `selection_metrics` names the finished metric runs the selection reads (False: all);
    a queue already built keeps its order, a new one (or a new batch) takes the choice.
    `show_systems`: kits made from now on keep the outputs' system names (False: blind).
    `practice`: the practice pass mark and its attempts (a pass mark no rater could reach
    is refused, and nothing is stored)."""
    with study.session(write=True) as s:
        settings = load_settings(s)
        if protocol is not None:
            settings.protocol = protocol
        if hidden_number is not None:
            settings.hidden_number = hidden_number
        if source_spans is not None:
            settings.esa_source_spans = source_spans
        if show_systems is not None:
            settings.show_systems = show_systems
        if likert_labels is not None:
            settings.likert_labels = list(likert_labels)
        if prefill is False:
            settings.esa_prefill = None
        elif prefill is not None:
            settings.esa_prefill = find_prefill(s, prefill)
        if selection is not None:
            settings.selection = check_selection(selection)
            check_selection_fits(s, selection)
        if selection_metrics is False:
            settings.selection_metrics = None
        elif selection_metrics is not None:
            runs = resolve_runs(done_runs(s), selection_metrics)
            settings.selection_metrics = [r.label for r in runs]
        if practice is not None:
            practice.apply(s, settings)
        save_settings(s, settings)
        return describe(settings, _practice_items(s))


def check_selection_fits(s: Session, selection: str) -> None:
    """Refuse a selection the study's items cannot give: `balanced` takes the systems in
    turn, and on items of fewer than two systems it would be the random order under another
    name. The command and the settings dialog both ask here."""
    if selection != "balanced":
        return
    names = {
        str(v)
        for v in s.scalars(select(Item.system).where(Item.kind == "regular").distinct())
        if v is not None and str(v) != ""
    }
    has_items = s.scalar(select(Item.id).where(Item.kind == "regular").limit(1)) is not None
    if has_items and len(names) < 2:
        shown = ", ".join(sorted(names)) or "none"
        raise UserError(
            "Selection 'balanced' takes the study's systems in turn, and its items hold "
            f"{len(names)} system{'' if len(names) == 1 else 's'} ({shown}): its order would "
            "be the random one. Choose random, or import outputs of two systems or more."
        )


@dataclass(frozen=True)
class PracticeOptions:
    """Changes to the practice pass mark; None leaves a value as it is. `items` False:
    no pass mark (practice is one pass again)."""

    items: int | Literal[False] | None = None
    points: float | None = None
    attempts: int | None = None
    after_failed: str | None = None
    # The number of practice items the lead counted ("4 of 5"): it must be the study's.
    out_of: int | None = None

    def apply(self, s: Session, settings: AnnotationSettings) -> None:
        have = _practice_items(s)
        if self.out_of is not None and self.out_of != have:
            raise UserError(_miscounted(self.items, self.out_of, have))
        if self.items is False:
            settings.practice_pass_items = None
        elif self.items is not None:
            settings.practice_pass_items = self.items
        if self.points is not None:
            settings.practice_within = self.points
        if self.attempts is not None:
            settings.practice_attempts = self.attempts
        if self.after_failed is not None:
            settings.practice_after_failed = self.after_failed


def _miscounted(items: int | Literal[False] | None, out_of: int, have: int) -> str:
    said = f"Practice pass mark '{items} of {out_of}'"
    if not have:
        return (
            f"{said}: the study has no practice items yet. Add them first (meaningbench "
            "practice STUDY --add FILE), then set the pass mark."
        )
    plural = "" if have == 1 else "s"
    if isinstance(items, int) and items > have:
        return (
            f"{said}: the study has {have} practice item{plural}, so no rater could pass "
            f"{items}; ask for at most {have} of {have}."
        )
    return f"{said}: the study has {have} practice item{plural}, not {out_of}; write '{items} of {have}'."
