"""Where a rating screen stands in the rater's queue, and the writes that move it.

The annotation screen steps through items and the side-by-side screen through units of
outputs; `RatingScreen` does the same things with either through one `RatingCursor`:
show the next unrated one, go back through what was rated and forth again, skip, undo.
`ItemCursor` and `UnitCursor` put the engine's sessions behind it; their writes are ops,
run by the screen through `ScreenWrites`.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from meaningbench.ops.rate import AnnotationSession, SideBySideSession, undo_rating, undo_unit
from meaningbench.ops.skip import skip_item, skip_unit
from meaningbench.queries.annotation import ShownItem, ShownUnit
from meaningbench.runtime import Job
from meaningbench.runtime.changes import StudyChanges, Wrote

S = TypeVar("S")


class RatingCursor(Protocol[S]):
    @property
    def reviewing(self) -> bool:
        """True while moved back to something already rated."""
        ...

    def next(self) -> S | None:
        """The first unrated one of the queue (None: all are rated); leaves revision."""
        ...

    def advance(self) -> S | None:
        """After a submission: what comes next (the following one while revising)."""
        ...

    def previous(self) -> S | None:
        """The rated one before the one on screen (None at the first)."""
        ...

    def following(self) -> S | None:
        """The rated one after the one on screen; past the last, the next unrated one."""
        ...

    def item_ids(self, shown: S) -> list[int]: ...

    def skip(self, shown: S) -> Job[StudyChanges]: ...

    def undo(self) -> Job[Wrote[S | None]]:
        """Withdraw the latest submission; the job's value is what is shown again."""
        ...


class ItemCursor:
    """One item at a time (`AnnotationSession`)."""

    def __init__(self, session: AnnotationSession) -> None:
        self.session = session

    @property
    def reviewing(self) -> bool:
        return self.session.reviewing

    def next(self) -> ShownItem | None:
        return self.session.next_item()

    def advance(self) -> ShownItem | None:
        return self.session.advance()

    def previous(self) -> ShownItem | None:
        return self.session.previous()

    def following(self) -> ShownItem | None:
        return self.session.following()

    def item_ids(self, shown: ShownItem) -> list[int]:
        return [shown.item_id]

    def skip(self, shown: ShownItem) -> Job[StudyChanges]:
        return skip_item(self.session, shown.item_id)

    def undo(self) -> Job[Wrote[ShownItem | None]]:
        return undo_rating(self.session)


class UnitCursor:
    """The outputs of one source at a time (`SideBySideSession`)."""

    def __init__(self, sxs: SideBySideSession) -> None:
        self.sxs = sxs

    @property
    def reviewing(self) -> bool:
        return self.sxs.reviewing

    def next(self) -> ShownUnit | None:
        return self.sxs.next_unit()

    def advance(self) -> ShownUnit | None:
        return self.sxs.advance()

    def previous(self) -> ShownUnit | None:
        return self.sxs.previous()

    def following(self) -> ShownUnit | None:
        return self.sxs.following()

    def item_ids(self, shown: ShownUnit) -> list[int]:
        return shown.item_ids

    def skip(self, shown: ShownUnit) -> Job[StudyChanges]:
        return skip_unit(self.sxs, shown)

    def undo(self) -> Job[Wrote[ShownUnit | None]]:
        return undo_unit(self.sxs)
