"""Side-by-side rating (sxs): the outputs of one source on one screen, each on its own slider.

A unit is the rater's next unrated queue entries that share a source (at most the study's
`sxs_width`). The outputs are shown in an order drawn from the study's seed, the rater and
the unit, so a restart shows the same order; each rating records the order it was given in
(`rating.display`: its position and the item ids as shown), so position effects can be
measured. Submitting a unit stores one rating per output under one submission time, and
undo withdraws the whole unit, as the slider's undo withdraws one item.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.annotation.model import ItemGiven, ShownItem, Submission
from meaningbench.annotation.session import AnnotationSession
from meaningbench.db.current_ratings import is_current
from meaningbench.db.models import Item, QueueEntry, Rating, utcnow
from meaningbench.errors import UserError


@dataclass(frozen=True)
class ShownUnit:
    source: str
    items: tuple[ShownItem, ...]  # in the order shown
    reviewing: bool
    shown_at: datetime

    @property
    def item_ids(self) -> list[int]:
        return [i.item_id for i in self.items]


def display_order(seed: int, annotator: str, item_ids: list[int]) -> list[int]:
    """The shown order of a unit's outputs: random, but the same on every showing."""
    key = f"{seed}\x1f{annotator}\x1f{','.join(map(str, sorted(item_ids)))}".encode()
    rng = random.Random(int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big"))
    order = sorted(item_ids)
    rng.shuffle(order)
    return order


class SideBySideSession:
    """Units of outputs for one annotator, over the per-item engine."""

    def __init__(self, session: AnnotationSession) -> None:
        if session.protocol != "sxs":
            raise UserError(f"The study's protocol is {session.protocol!r}, not sxs.")
        self.session = session
        self.scale = session.scales[0]
        self.width = max(2, int(session.settings.sxs_width))
        # While revising: the submission time of the unit on screen.
        self._cursor: datetime | None = None

    @property
    def reviewing(self) -> bool:
        return self._cursor is not None

    def _unit(self, s: Session, item_ids: list[int], *, reviewing: bool) -> ShownUnit:
        shown = tuple(
            self.session._show(s, item_id, reviewing=reviewing)  # noqa: SLF001 - one engine
            for item_id in item_ids
        )
        source = shown[0].source
        return ShownUnit(source=source, items=shown, reviewing=reviewing, shown_at=utcnow())

    def next_unit(self) -> ShownUnit | None:
        self._cursor = None
        sess = self.session
        with sess.study.session() as s:
            first = s.execute(
                select(QueueEntry.item_id, Item.source_group)
                .join(Item, Item.id == QueueEntry.item_id)
                .where(QueueEntry.annotator_id == sess.annotator_id, QueueEntry.done.is_(False))
                .order_by(QueueEntry.position)
                .limit(1)
            ).first()
            if first is None:
                return None
            ids = list(
                s.scalars(
                    select(QueueEntry.item_id)
                    .join(Item, Item.id == QueueEntry.item_id)
                    .where(
                        QueueEntry.annotator_id == sess.annotator_id,
                        QueueEntry.done.is_(False),
                        Item.source_group == first.source_group,
                    )
                    .order_by(QueueEntry.position)
                    .limit(self.width)
                )
            )
            order = display_order(sess.settings.seed or 0, sess.annotator_name, ids)
            return self._unit(s, order, reviewing=False)

    def submit_unit(
        self,
        unit: ShownUnit,
        values: dict[int, float],
        starts: dict[int, float | None] | None = None,
    ) -> list[Submission]:
        """One rating per output, all with one submission time and the order shown."""
        missing = [i for i in unit.item_ids if values.get(i) is None]
        if missing:
            raise UserError(f"Every output needs a rating first ({len(missing)} without one).")
        starts = starts or {}
        at = utcnow()
        name = self.scale.name
        given = [
            ItemGiven(
                item_id,
                {name: float(values[item_id])},
                {name: starts.get(item_id)},
                unit.shown_at,
                display={"position": position, "items": unit.item_ids},
            )
            for position, item_id in enumerate(unit.item_ids)
        ]
        return self.session.submit_together(given, at)

    def advance(self) -> ShownUnit | None:
        """After a submission: the next unrated unit (a revised unit moves to the end of the
        rater's history, so "the one after it" would be no unit at all)."""
        return self.next_unit()

    def undo_unit(self) -> ShownUnit | None:
        """Withdraw the latest unit submitted and show it again (None: nothing to undo)."""
        latest = self._latest_time(before=None)
        if latest is None:
            return None
        reopened: list[ShownItem] = []
        while self._latest_time(before=None) == latest:
            item = self.session.undo_last()
            if item is None:
                break
            reopened.append(item)
        restored = [i for i in reopened if i.reviewing]
        if restored:  # a revision was undone: the earlier ratings of the unit are back
            at = self._time_of(restored[0].item_id)
            if at is not None:
                return self._unit_at(at, reviewing=True)
        self._cursor = None
        return self.next_unit()

    def _time_of(self, item_id: int) -> datetime | None:
        sess = self.session
        with sess.study.session() as s:
            return s.scalar(
                select(Rating.submitted_at).where(
                    Rating.annotator_id == sess.annotator_id,
                    Rating.item_id == item_id,
                    is_current(),
                )
            )

    def skip_unit(self, unit: ShownUnit) -> None:
        for item_id in unit.item_ids:
            self.session.skip(item_id)

    # -- revising --------------------------------------------------------------------------

    def _latest_time(
        self, before: datetime | None, after: datetime | None = None
    ) -> datetime | None:
        sess = self.session
        with sess.study.session() as s:
            query = select(Rating.submitted_at).where(
                Rating.annotator_id == sess.annotator_id,
                is_current(),
                Rating.origin == "ui",
            )
            if before is not None:
                query = query.where(Rating.submitted_at < before)
            if after is not None:
                query = query.where(Rating.submitted_at > after)
                return s.scalar(query.order_by(Rating.submitted_at, Rating.id).limit(1))
            return s.scalar(query.order_by(Rating.submitted_at.desc(), Rating.id.desc()).limit(1))

    def _unit_at(self, submitted_at: datetime, *, reviewing: bool) -> ShownUnit | None:
        sess = self.session
        with sess.study.session() as s:
            rows = s.execute(
                select(Rating.item_id, Rating.display).where(
                    Rating.annotator_id == sess.annotator_id,
                    is_current(),
                    Rating.submitted_at == submitted_at,
                )
            ).all()
            if not rows:
                return None
            shown = (rows[0].display or {}).get("items")
            rated = {r.item_id for r in rows}
            order = [i for i in shown if i in rated] if shown else sorted(rated)
            self._cursor = submitted_at
            return self._unit(s, order, reviewing=reviewing)

    def previous(self) -> ShownUnit | None:
        at = self._latest_time(before=self._cursor)
        return None if at is None else self._unit_at(at, reviewing=True)

    def following(self) -> ShownUnit | None:
        if self._cursor is None:
            return None
        at = self._latest_time(before=None, after=self._cursor)
        if at is None:
            return self.next_unit()
        return self._unit_at(at, reviewing=True)
