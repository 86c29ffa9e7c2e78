"""Bring scenes into a study: from UCCA XML files, or proposed by a dependency parser.

A UCCA passage is matched to the study's source sentences by its letters and digits only
(case-folded): corpora tokenise differently ("don't" vs "do n't", `` vs "), and which
source a passage annotates should not depend on that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.db.models import Item
from meaningbench.jobs.scene_store import replace_scenes, scene_counts
from meaningbench.metrics.structural.scenes import SceneSpec
from meaningbench.metrics.structural.ucca import iter_ucca_files, parse_ucca_xml


def text_key(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def source_groups(session: Session) -> dict[str, str]:
    """source_group -> source text, one per group (regular items and controls alike)."""
    out: dict[str, str] = {}
    for group, source in session.execute(select(Item.source_group, Item.source).order_by(Item.id)):
        out.setdefault(group, source)
    return out


@dataclass
class SceneImportReport:
    files: int = 0
    passages: int = 0
    matched_groups: int = 0
    scenes: int = 0
    groups: list[str] = field(default_factory=list)  # the source groups given scenes
    unmatched: list[str] = field(default_factory=list)  # "file: passage id" of passages not found

    def summary(self) -> str:
        text = (
            f"{self.passages} UCCA passage(s) from {self.files} file(s); "
            f"{self.scenes} scene(s) stored for {self.matched_groups} source sentence(s)"
        )
        if self.unmatched:
            text += f"; {len(self.unmatched)} passage(s) match no source of the study"
        return text


def import_ucca(
    session: Session, paths: Iterable[Path], *, annotator_id: int | None = None
) -> SceneImportReport:
    """Store the scenes of every passage whose text is a source of the study (origin ucca)."""
    by_key: dict[str, list[str]] = {}
    for group, source in source_groups(session).items():
        by_key.setdefault(text_key(source), []).append(group)
    report = SceneImportReport()
    for path in paths:
        for file in iter_ucca_files(Path(path)):
            report.files += 1
            passage = parse_ucca_xml(file)
            report.passages += 1
            groups = by_key.get(text_key(passage.text), [])
            if not groups:
                report.unmatched.append(f"{file}: passage {passage.passage_id}")
                continue
            for group in groups:
                replace_scenes(
                    session, group, passage.scenes, origin="ucca", annotator_id=annotator_id
                )
                report.matched_groups += 1
                report.groups.append(group)
                report.scenes += len(passage.scenes)
    return report


@dataclass
class ProposalReport:
    groups: int = 0
    scenes: int = 0
    skipped: int = 0  # groups that already had scenes and were left alone


def propose_into_study(
    session: Session,
    propose: Callable[[Sequence[str]], list[list[SceneSpec]]],
    *,
    overwrite: bool = False,
    groups: Iterable[str] | None = None,
) -> ProposalReport:
    """Propose scenes (origin parser) for every source without scenes, or all with overwrite."""
    sources = source_groups(session)
    wanted = sorted(sources if groups is None else set(groups) & set(sources))
    counts = scene_counts(session)
    report = ProposalReport()
    todo = []
    for group in wanted:
        if not overwrite and counts.get(group):
            report.skipped += 1
            continue
        todo.append(group)
    proposals = propose([sources[g] for g in todo]) if todo else []
    for group, scenes in zip(todo, proposals, strict=True):
        replace_scenes(session, group, scenes, origin="parser")
        report.groups += 1
        report.scenes += len(scenes)
    return report
