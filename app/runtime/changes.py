"""What a write changed in the study, as one typed value (`StudyChanges`).

Every write (a rating, a flag, an import, the battery's scores, a merge, a label-set fix, a
training run that registers its model) returns one; the app's job runner broadcasts it
once to every screen, and each screen decides from it what to refresh. A write that runs
long tells what it has committed so far with `ctx.changed(changes)` (the battery, after
each batch of scores), so screens refresh while it runs through the same path.

Qt-free and import-free, at the bottom of the engine: any write can build one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


def _ids(values: Iterable[int]) -> frozenset[int]:
    return frozenset(int(v) for v in values)


def _scores(
    scores: Mapping[str, Iterable[int]] | Iterable[tuple[str, Iterable[int]]],
) -> tuple[tuple[str, frozenset[int]], ...]:
    merged: dict[str, set[int]] = {}
    pairs = scores.items() if isinstance(scores, Mapping) else scores
    for label, ids in pairs:
        merged.setdefault(str(label), set()).update(int(i) for i in ids)
    return tuple(sorted((label, frozenset(ids)) for label, ids in merged.items()))


@dataclass(frozen=True)
class StudyChanges:
    """Which parts of the study one write changed.

    `items`: items added or removed; `everything` says a write changed the study wholesale
    (an import or a merge whose rows are not counted one by one), so every screen reloads.
    `scores` is per run label (`metric@config`): the items that got new scores.
    `scenes` are the source groups whose stored scenes changed (scores stay until rerun).
    `notes` are the items whose flag or comment (an annotator's note on an item) changed.
    """

    ratings: frozenset[int] = frozenset()
    items: frozenset[int] = frozenset()
    scores: tuple[tuple[str, frozenset[int]], ...] = ()
    label_sets: frozenset[str] = frozenset()
    settings: bool = False
    everything: bool = False
    # New or removed runs, models or sweeps: lists of what exists, not their values.
    runs: bool = False
    scenes: frozenset[str] = frozenset()
    notes: frozenset[int] = frozenset()

    @classmethod
    def of(
        cls,
        *,
        ratings: Iterable[int] = (),
        items: Iterable[int] = (),
        scores: Mapping[str, Iterable[int]] | Iterable[tuple[str, Iterable[int]]] = (),
        label_sets: Iterable[str] = (),
        settings: bool = False,
        everything: bool = False,
        runs: bool = False,
        scenes: Iterable[str] = (),
        notes: Iterable[int] = (),
    ) -> StudyChanges:
        """Build one from any iterables (ids are normalised to frozensets of int)."""
        return cls(
            ratings=_ids(ratings),
            items=_ids(items),
            scores=_scores(scores),
            label_sets=frozenset(str(s) for s in label_sets),
            settings=settings,
            everything=everything,
            runs=runs,
            scenes=frozenset(str(s) for s in scenes),
            notes=_ids(notes),
        )

    @property
    def scores_by_label(self) -> dict[str, frozenset[int]]:
        return dict(self.scores)

    @property
    def scored_items(self) -> frozenset[int]:
        return frozenset().union(*(ids for _, ids in self.scores))

    def __bool__(self) -> bool:
        return bool(
            self.ratings
            or self.items
            or self.scores
            or self.label_sets
            or self.settings
            or self.everything
            or self.runs
            or self.scenes
            or self.notes
        )

    def __or__(self, other: StudyChanges) -> StudyChanges:
        return StudyChanges(
            ratings=self.ratings | other.ratings,
            items=self.items | other.items,
            scores=_scores([*self.scores, *other.scores]),
            label_sets=self.label_sets | other.label_sets,
            settings=self.settings or other.settings,
            everything=self.everything or other.everything,
            runs=self.runs or other.runs,
            scenes=self.scenes | other.scenes,
            notes=self.notes | other.notes,
        )

    def __sub__(self, other: StudyChanges) -> StudyChanges:
        """What `self` says that `other` did not (a job's result less what it told mid-run)."""
        told = other.scores_by_label
        scores = [(label, ids - told.get(label, frozenset())) for label, ids in self.scores]
        return StudyChanges(
            ratings=self.ratings - other.ratings,
            items=self.items - other.items,
            scores=tuple((label, ids) for label, ids in scores if ids),
            label_sets=self.label_sets - other.label_sets,
            settings=self.settings and not other.settings,
            everything=self.everything and not other.everything,
            runs=self.runs and not other.runs,
            scenes=self.scenes - other.scenes,
            notes=self.notes - other.notes,
        )


EMPTY = StudyChanges()


@dataclass(frozen=True)
class Wrote(Generic[T]):
    """A write's result for its screen (an import's report) with the changes it made."""

    value: T
    changes: StudyChanges = field(default=EMPTY)


def changes_of(result: object) -> StudyChanges:
    """The changes a job's return value carries (none for a read)."""
    if isinstance(result, StudyChanges):
        return result
    if isinstance(result, Wrote):
        return result.changes
    return EMPTY
