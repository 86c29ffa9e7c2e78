"""Choosing a study's annotation protocol (da, esa, sxs, likert) and how it is described."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from meaningbench.annotation.proposals import PrefillSource, find_prefill
from meaningbench.annotation.selection import done_runs, resolve_runs
from meaningbench.annotation.settings import (
    PROTOCOLS,
    SELECTIONS,
    AnnotationSettings,
    check_selection,
    load_settings,
    save_settings,
)
from meaningbench.db.study import Study


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

    def selection_line(self) -> str:
        runs = "every finished metric run"
        if self.selection_metrics is not None:
            runs = ", ".join(self.selection_metrics)
        if self.selection == "random":
            return f"{self.selection} — {SELECTIONS[self.selection]}"
        return f"{self.selection} — {SELECTIONS.get(self.selection, 'unknown')} (scores of {runs})"


def describe(settings: AnnotationSettings) -> ProtocolChoice:
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
    )


def study_protocol(study: Study) -> ProtocolChoice:
    with study.session() as s:
        return describe(load_settings(s))


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
) -> ProtocolChoice:
    """Store the study's protocol and its options (None: leave as it is). `prefill` names a
    stored llm_judge run (its label) whose error spans pre-fill the ESA screen; False: none.
    `selection_metrics` names the finished metric runs the selection reads (False: all);
    a queue already built keeps its order, a new one (or a new batch) takes the choice.
    `show_systems`: kits made from now on keep the outputs' system names (False: blind)."""
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
        if selection_metrics is False:
            settings.selection_metrics = None
        elif selection_metrics is not None:
            runs = resolve_runs(done_runs(s), selection_metrics)
            settings.selection_metrics = [r.label for r in runs]
        save_settings(s, settings)
        return describe(settings)
