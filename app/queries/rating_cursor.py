"""Where a rater stands in their queue: what the rating screens read while the rater works.

A cursor holds the rater's engine session privately and answers in values: the item or the
unit of side-by-side outputs to show (`ShownItem`, `ShownUnit`), the queue's counts
(`Progress`), the scales and settings the screen is laid out from, the practice pairs not
answered yet. Moving through the queue (next, back, forth) reads the study and changes only
where the cursor stands; it never writes. The writes (a rating, its undo, a skip, a flag, a
practice answer) are ops of `meaningbench.ops` that take the cursor and write through the
session behind it (`session_of`, `side_by_side_of`, `practice_of`: for the ops, never the
screens). Opening a cursor writes too (the rater and their queue, when new), so the ops
open them: `ops.rate.open_rating`, `ops.rate.open_side_by_side`, `ops.practice.open_practice`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from meaningbench.annotation.model import Progress, Scale, ShownItem
from meaningbench.annotation.practice import Practice, PracticeStanding
from meaningbench.annotation.settings import AnnotationSettings
from meaningbench.annotation.side_by_side import ShownUnit
from meaningbench.annotation.time_spent import SpentTally
from meaningbench.queries.queue_progress import Standing

if TYPE_CHECKING:
    from meaningbench.annotation.practice import PracticeSession
    from meaningbench.annotation.session import AnnotationSession
    from meaningbench.annotation.side_by_side import SideBySideSession

__all__ = [
    "ItemCursor",
    "PracticeCursor",
    "Progress",
    "RatingCursor",
    "UnitCursor",
    "practice_of",
    "session_of",
    "side_by_side_of",
]

S = TypeVar("S")


class RatingCursor(ABC, Generic[S]):
    """A rater's place in their queue, over what a screen shows (`S`: an item, a unit).

    The annotation screen steps through items and the side-by-side screen through units;
    `ui.annotation.rating_screen.RatingScreen` moves through either the same way: the next
    unrated one, back through what was rated and forth again.
    """

    def __init__(self, session: AnnotationSession) -> None:
        self._session = session
        self._spent = SpentTally(session.study, session.annotator_id)

    @property
    def annotator_name(self) -> str:
        return self._session.annotator_name

    @property
    def protocol(self) -> str:
        return self._session.protocol

    @property
    def scales(self) -> tuple[Scale, ...]:
        """The scales a rating gives a value on, in the study's order."""
        return tuple(self._session.scales)

    @property
    def settings(self) -> AnnotationSettings:
        """The study's annotation settings as they were when the queue was opened."""
        return self._session.settings

    def progress(self) -> Progress:
        """The counts of the rater's queue (rated, total, skipped), kept by the writes."""
        return self._session.progress()

    def standing(self, on_screen: int) -> Standing:
        """The counts, the `on_screen` entries shown now (0: none) and the time spent, for
        the header's counter and the end screen (`queries.queue_progress`)."""
        return Standing(
            progress=self.progress(),
            on_screen=on_screen,
            reviewing=self.reviewing and on_screen > 0,
            spent=self._spent.total(),
        )

    @property
    @abstractmethod
    def reviewing(self) -> bool:
        """True while moved back to something already rated."""

    @abstractmethod
    def next(self) -> S | None:
        """The first unrated one of the queue (None: all are rated); leaves revision."""

    @abstractmethod
    def advance(self) -> S | None:
        """After a submission: what comes next (the following one while revising)."""

    @abstractmethod
    def previous(self) -> S | None:
        """The rated one before the one on screen (None at the first)."""

    @abstractmethod
    def following(self) -> S | None:
        """The rated one after the one on screen; past the last, the next unrated one."""

    @abstractmethod
    def item_ids(self, shown: S) -> list[int]:
        """The items `shown` holds."""


class ItemCursor(RatingCursor[ShownItem]):
    """One item at a time, for the annotation screen."""

    @property
    def reviewing(self) -> bool:
        return self._session.reviewing

    def current(self) -> ShownItem | None:
        """What is on screen now: the item under revision, or the next unrated one."""
        return self._session.current()

    def next(self) -> ShownItem | None:
        return self._session.next_item()

    def advance(self) -> ShownItem | None:
        return self._session.advance()

    def previous(self) -> ShownItem | None:
        return self._session.previous()

    def following(self) -> ShownItem | None:
        return self._session.following()

    def item_ids(self, shown: ShownItem) -> list[int]:
        return [shown.item_id]


class UnitCursor(RatingCursor[ShownUnit]):
    """The outputs of one source at a time, for the side-by-side screen. A revised unit
    moves to the end of the rater's history, so after a submission comes the next unrated
    unit."""

    def __init__(self, sxs: SideBySideSession) -> None:
        super().__init__(sxs.session)
        self._sxs = sxs

    @property
    def scale(self) -> Scale:
        """The one scale every output is rated on."""
        return self._sxs.scale

    @property
    def reviewing(self) -> bool:
        return self._sxs.reviewing

    def next(self) -> ShownUnit | None:
        return self._sxs.next_unit()

    def advance(self) -> ShownUnit | None:
        return self._sxs.advance()

    def previous(self) -> ShownUnit | None:
        return self._sxs.previous()

    def following(self) -> ShownUnit | None:
        return self._sxs.following()

    def item_ids(self, shown: ShownUnit) -> list[int]:
        return shown.item_ids


class PracticeCursor:
    """A new rater's practice block: the practice pairs not answered yet."""

    def __init__(self, session: PracticeSession) -> None:
        self._session = session

    def pending(self) -> list[Practice]:
        """The pairs the current attempt still asks, in the study's order."""
        return self._session.pending()

    def standing(self) -> PracticeStanding:
        """The rater's attempts against the study's pass mark, and what follows."""
        return self._session.standing()


def session_of(cursor: RatingCursor[Any]) -> AnnotationSession:
    """The engine session behind a cursor, for the ops' writes (never the screens')."""
    return cursor._session  # noqa: SLF001 - the cursor's own module


def side_by_side_of(cursor: UnitCursor) -> SideBySideSession:
    """The side-by-side session behind a cursor, for the ops' writes."""
    return cursor._sxs  # noqa: SLF001 - the cursor's own module


def practice_of(cursor: PracticeCursor) -> PracticeSession:
    """The practice session behind a cursor, for the ops' writes."""
    return cursor._session  # noqa: SLF001 - the cursor's own module
