"""One annotator at work on a study: next item, submit, undo, skip, flag, revise, progress.

Every change is its own small transaction, committed before the call returns; with the
study's WAL journal and synchronous=FULL a submission survives a crash or a power cut the
moment `submit` returns. Nothing is cached across calls that the file does not also hold,
so a session opened after a crash resumes exactly where the last one stopped: the first
unrated entry of the stored queue.

Ratings are never deleted or changed in value: a revision marks the old row `superseded`
and points the new one at it; an undo marks the submission `undone` (and brings back the
rating it had superseded, if any).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from meaningbench.annotation.kit_log import record_event
from meaningbench.annotation.model import ItemGiven, Progress, Scale, ShownItem, Submission
from meaningbench.annotation.practice import PracticeNotPassed, practice_refusal
from meaningbench.annotation.proposals import (
    ProposalFate,
    ProposedSpan,
    check_fates,
    fates_of,
    proposals_for,
    store_fates,
)
from meaningbench.annotation.queue import ensure_queue, get_or_create_annotator
from meaningbench.annotation.settings import (
    SINGLE_SCORE_PROTOCOLS,
    AnnotationSettings,
    load_settings,
)
from meaningbench.annotation.spans import Span, check_no_overlap, check_span, spans_of, store_spans
from meaningbench.db.current_ratings import CURRENT, is_current
from meaningbench.db.models import Dimension, Item, ItemNote, QueueEntry, Rating, utcnow
from meaningbench.db.study import Study
from meaningbench.errors import UserError


class AnnotationSession:
    """The engine behind the rating screen, for one annotator of one open study."""

    def __init__(self, study: Study, annotator_name: str) -> None:
        name = (annotator_name or "").strip()
        if not name:
            raise UserError("An annotator needs a name.")
        self.study = study
        with study.session(write=True) as s:
            annotator = get_or_create_annotator(s, name)
            if annotator.kind != "named":
                raise UserError(
                    f"{name!r} is an imported {annotator.kind} rating source, not a rater; "
                    "choose another annotator name."
                )
            refusal = practice_refusal(s, annotator.id)
            if refusal is not None:
                raise PracticeNotPassed(refusal)
            ensure_queue(s, annotator)
            self.annotator_id = annotator.id
            self.annotator_name = annotator.name
            self.settings: AnnotationSettings = load_settings(s)
            dims = s.scalars(
                select(Dimension).where(Dimension.active).order_by(Dimension.position, Dimension.id)
            ).all()
            self.scales: list[Scale] = [
                Scale(
                    id=d.id,
                    name=d.name,
                    scale=d.scale,
                    min_value=d.min_value,
                    max_value=d.max_value,
                    label_low=d.label_low,
                    label_high=d.label_high,
                    question=d.question,
                    point_labels=tuple(self.settings.likert_labels) if d.scale == "likert" else (),
                )
                for d in dims
            ]
        if not self.scales:
            raise UserError("The study has no active rating dimension; activate one in Settings.")
        self.protocol = self.settings.protocol
        if self.protocol in SINGLE_SCORE_PROTOCOLS:
            # One judgement per output: the first active dimension (meaning, by default).
            self.scales = self.scales[:1]
        # The item under revision (moved back to it); None: at the next unrated item.
        self._cursor: int | None = None
        self._shown: ShownItem | None = None
        self._progress: Progress | None = None

    # -- reading -------------------------------------------------------------------------

    def _entry(self, s: Session, item_id: int) -> QueueEntry:
        entry = s.scalar(
            select(QueueEntry).where(
                QueueEntry.annotator_id == self.annotator_id, QueueEntry.item_id == item_id
            )
        )
        if entry is None:
            raise UserError(f"Item {item_id} is not in {self.annotator_name}'s queue.")
        return entry

    def _show(self, s: Session, item_id: int, *, reviewing: bool) -> ShownItem:
        self._shown = self._read(s, item_id, reviewing=reviewing)
        return self._shown

    def _read(self, s: Session, item_id: int, *, reviewing: bool) -> ShownItem:
        """The item as the screen shows it, read in `s` (nothing of the session changes)."""
        item = s.get(Item, item_id)
        assert item is not None
        rows = s.execute(
            select(Dimension.name, Rating.value, Rating.id)
            .join(Dimension, Dimension.id == Rating.dimension_id)
            .where(
                Rating.item_id == item_id,
                Rating.annotator_id == self.annotator_id,
                is_current(),
            )
        ).all()
        flagged, comment = self._note(s, item_id)
        first = self.scales[0].name
        span_rating = [rid for name, _v, rid in rows if name == first]
        spans = spans_of(s, span_rating).get(span_rating[0], ()) if span_rating else ()
        fates = fates_of(s, span_rating).get(span_rating[0], ()) if span_rating else ()
        proposals: tuple[ProposedSpan, ...] = ()
        prefill = self.settings.esa_prefill
        if not span_rating and prefill is not None and self.protocol == "esa":
            proposals = proposals_for(s, prefill, item_id, item.output)
        return ShownItem(
            item_id=item_id,
            source=item.source,
            output=item.output,
            values={name: value for name, value, _rid in rows},
            flagged=flagged,
            comment=comment,
            reviewing=reviewing,
            shown_at=utcnow(),
            spans=spans,
            proposals=proposals,
            fates=fates,
        )

    def _note(self, s: Session, item_id: int) -> tuple[bool, str | None]:
        """The annotator's latest flag and comment on the item (the latest note wins)."""
        note = s.scalar(
            select(ItemNote)
            .where(ItemNote.item_id == item_id, ItemNote.annotator_id == self.annotator_id)
            .order_by(ItemNote.id.desc())
            .limit(1)
        )
        return (bool(note.flagged), note.comment) if note is not None else (False, None)

    def next_item(self) -> ShownItem | None:
        """The first unrated item of the queue (None when all are rated); leaves revision."""
        self._cursor = None
        with self.study.session() as s:
            item_id = s.scalar(
                select(QueueEntry.item_id)
                .where(QueueEntry.annotator_id == self.annotator_id, QueueEntry.done.is_(False))
                .order_by(QueueEntry.position)
                .limit(1)
            )
            if item_id is None:
                self._shown = None
                return None
            return self._show(s, item_id, reviewing=False)

    def current(self) -> ShownItem | None:
        """What is on screen now (the item under revision, or the next unrated one)."""
        if self._shown is not None:
            return self._shown
        return self.next_item()

    def advance(self) -> ShownItem | None:
        """After a submission: the following rated item while revising, else the next one."""
        if self._cursor is not None:
            return self.following()
        return self.next_item()

    @property
    def reviewing(self) -> bool:
        return self._cursor is not None

    def progress(self, *, refresh: bool = False) -> Progress:
        """Counts of this annotator's queue.

        Counted from the file once, then kept up to date by this session's own changes:
        a fresh count over a 10,000-entry queue costs several milliseconds on every item.
        `refresh=True` counts again (after a merge, say).
        """
        if self._progress is None or refresh:
            self._progress = self._count()
        return self._progress

    def _adjust(self, rated: int = 0, skipped: int = 0) -> None:
        if self._progress is not None:
            self._progress = replace(
                self._progress,
                rated=self._progress.rated + rated,
                skipped=self._progress.skipped + skipped,
            )

    def _count(self) -> Progress:
        with self.study.session() as s:
            total, rated, skipped = s.execute(
                select(
                    func.count(),
                    # count() with a filter: a sum over a Boolean column comes back as a bool.
                    func.count().filter(QueueEntry.done.is_(True)),
                    func.count().filter(QueueEntry.done.is_(False), QueueEntry.skips > 0),
                ).where(QueueEntry.annotator_id == self.annotator_id)
            ).one()
        return Progress(rated=int(rated), total=int(total), skipped=int(skipped))

    # -- moving among rated items ------------------------------------------------------

    def _neighbour(self, s: Session, position: float | None, *, before: bool) -> int | None:
        query = select(QueueEntry.item_id).where(
            QueueEntry.annotator_id == self.annotator_id, QueueEntry.done.is_(True)
        )
        if position is not None:
            query = query.where(
                QueueEntry.position < position if before else QueueEntry.position > position
            )
        order = QueueEntry.position.desc() if before else QueueEntry.position
        return s.scalar(query.order_by(order).limit(1))

    def previous(self) -> ShownItem | None:
        """The rated item before the one on screen (None at the first; nothing changes)."""
        with self.study.session() as s:
            position = None if self._cursor is None else self._entry(s, self._cursor).position
            item_id = self._neighbour(s, position, before=True)
            if item_id is None:
                return None
            self._cursor = item_id
            return self._show(s, item_id, reviewing=True)

    def following(self) -> ShownItem | None:
        """The rated item after the one on screen; past the last, the next unrated item."""
        if self._cursor is None:
            return None
        with self.study.session() as s:
            position = self._entry(s, self._cursor).position
            item_id = self._neighbour(s, position, before=False)
            if item_id is not None:
                self._cursor = item_id
                return self._show(s, item_id, reviewing=True)
        return self.next_item()

    # -- writing -------------------------------------------------------------------------

    def _check_values(self, values: dict[str, float]) -> None:
        missing = [sc.name for sc in self.scales if values.get(sc.name) is None]
        if missing:
            raise UserError(f"No rating given for: {', '.join(missing)}.")
        for sc in self.scales:
            v = float(values[sc.name])
            if not sc.min_value <= v <= sc.max_value:
                raise UserError(f"{sc.name}: {v:g} is outside {sc.min_value:g}–{sc.max_value:g}.")
            if sc.is_likert and v != int(v):
                raise UserError(f"{sc.name}: a Likert rating is a whole number, not {v:g}.")

    def submit(
        self,
        item_id: int,
        values_by_dimension: dict[str, float],
        start_values: dict[str, float | None] | None = None,
        shown_at: datetime | None = None,
        *,
        submitted_at: datetime | None = None,
        spans: tuple[Span, ...] | list[Span] = (),
        display: dict[str, object] | None = None,
        proposals: Sequence[ProposalFate] = (),
    ) -> Submission:
        """Store the ratings of one item (all active dimensions) in one transaction.

        `spans` (error span annotation) go with the rating of the first dimension, the
        protocol's score, and so do `proposals`: each pre-filled span the rater saw, with the
        span it became (among `spans`) or None where the rater deleted it. `display` records
        where a side-by-side output stood on screen.
        """
        given = ItemGiven(
            item_id,
            values_by_dimension,
            start_values or {},
            shown_at,
            tuple(spans),
            display,
            tuple(proposals),
        )
        return self.submit_together([given], submitted_at)[0]

    def submit_together(
        self, given: Sequence[ItemGiven], submitted_at: datetime | None = None
    ) -> list[Submission]:
        """Store several items' ratings in one transaction, all or none: a side-by-side
        unit is one submission, and a crash or a busy study must not keep half of it."""
        for g in given:
            self._check_values(g.values)
            if (g.spans or g.proposals) and self.protocol != "esa":
                raise UserError(f"Error spans belong to the esa protocol, not {self.protocol!r}.")
        submitted_at = submitted_at or utcnow()
        with self.study.session(write=True) as s:
            written = [self._write_given(s, g, submitted_at) for g in given]
        # Committed: only now do the counts move (a failed write leaves them as they were).
        for _, newly_done, was_skipped in written:
            if newly_done:
                self._adjust(rated=1, skipped=-1 if was_skipped else 0)
        return [w[0] for w in written]

    def _write_given(
        self, s: Session, g: ItemGiven, submitted_at: datetime
    ) -> tuple[Submission, bool, bool]:
        """One item's rows in the open transaction: (its submission, newly done, was
        skipped)."""
        shown = (
            self._shown if self._shown is not None and self._shown.item_id == g.item_id else None
        )
        shown_at = g.shown_at if g.shown_at is not None or shown is None else shown.shown_at
        duration = (
            max(0, int((submitted_at - shown_at).total_seconds() * 1000)) if shown_at else None
        )
        entry = self._entry(s, g.item_id)
        if g.spans or g.proposals:
            self._check_spans(s, g.item_id, g.spans, g.proposals)
        if shown is not None:  # read when shown, and kept current by flag()
            flagged, comment = shown.flagged, shown.comment
        else:
            flagged, comment = self._note(s, g.item_id)
        old = self._current_ratings(s, g.item_id)
        new_rows = []
        for sc in self.scales:
            prior = old.get(sc.id)
            if prior is not None:
                prior.state = "superseded"
            start = g.start_values.get(sc.name)
            new_rows.append(
                Rating(
                    item_id=g.item_id,
                    annotator_id=self.annotator_id,
                    dimension_id=sc.id,
                    value=float(g.values[sc.name]),
                    start_value=None if start is None else float(start),
                    shown_at=shown_at,
                    submitted_at=submitted_at,
                    duration_ms=duration,
                    flagged=flagged,
                    comment=comment,
                    state=CURRENT,
                    supersedes_id=prior.id if prior is not None else None,
                    origin="ui",
                    display=g.display,
                )
            )
        s.add_all(new_rows)
        newly_done, was_skipped = not entry.done, entry.skips > 0
        entry.done = True
        s.flush()
        ids = tuple(r.id for r in new_rows)
        store_spans(s, ids[0], g.spans)
        store_fates(s, ids[0], g.proposals)
        record_event(s, "rate", g.item_id)
        submission = Submission(
            item_id=g.item_id,
            rating_ids=ids,
            revised=bool(old),
            submitted_at=submitted_at,
            duration_ms=duration,
        )
        return submission, newly_done, was_skipped

    @staticmethod
    def _check_spans(
        s: Session,
        item_id: int,
        spans: tuple[Span, ...] | list[Span],
        proposals: Sequence[ProposalFate],
    ) -> None:
        item = s.get(Item, item_id)
        assert item is not None
        for span in spans:
            check_span(span, item.source, item.output, f"item {item_id}")
        check_no_overlap(list(spans), f"item {item_id}")
        check_fates(proposals, list(spans), item.source, item.output, f"item {item_id}")

    def _current_ratings(self, s: Session, item_id: int) -> dict[int, Rating]:
        """This annotator's ratings of the item now in force, by dimension id."""
        return {
            r.dimension_id: r
            for r in s.scalars(
                select(Rating).where(
                    Rating.item_id == item_id,
                    Rating.annotator_id == self.annotator_id,
                    is_current(),
                )
            )
        }

    def undo_last(self) -> ShownItem | None:
        """Withdraw this annotator's latest submission still in force and show its item again.

        A first rating is marked `undone` and its item becomes the next unrated one; a
        revision is marked `undone` and the rating it replaced is current again. Calling it
        again withdraws the submission before, and so on. None when nothing is left to undo.
        """
        with self.study.session(write=True) as s:
            latest = s.scalar(
                select(Rating)
                .where(
                    Rating.annotator_id == self.annotator_id,
                    is_current(),
                    Rating.origin == "ui",
                )
                .order_by(Rating.id.desc())
                .limit(1)
            )
            if latest is None:
                return None
            group = s.scalars(
                select(Rating).where(
                    Rating.annotator_id == self.annotator_id,
                    Rating.item_id == latest.item_id,
                    is_current(),
                    Rating.origin == "ui",
                    Rating.submitted_at == latest.submitted_at,
                )
            ).all()
            restored = False
            # A rating current again carries the item's latest flag and comment, as every
            # current rating does (`flag`): one given after it was replaced is not lost.
            note = self._note(s, latest.item_id)
            for r in group:
                r.state = "undone"
                if r.supersedes_id is not None:
                    prior = s.get(Rating, r.supersedes_id)
                    if prior is not None and prior.state == "superseded":
                        prior.state = CURRENT
                        prior.flagged, prior.comment = note
                        restored = True
            s.flush()
            record_event(s, "undo", latest.item_id)
            entry = self._entry(s, latest.item_id)
            reopened = not restored
            was_skipped = entry.skips > 0
            if reopened:
                entry.done = False
                # Reopened means next: move it before the first unrated entry so that a
                # restart (even after a crash) shows it first too.
                first = s.scalar(
                    select(func.min(QueueEntry.position)).where(
                        QueueEntry.annotator_id == self.annotator_id,
                        QueueEntry.done.is_(False),
                        QueueEntry.id != entry.id,
                    )
                )
                if first is not None and entry.position > first:
                    entry.position = float(first) - 1.0
            shown = self._read(s, entry.item_id, reviewing=restored)
        # Committed: only now does the session move (a failed write leaves it as it was).
        if reopened:
            self._adjust(rated=-1, skipped=1 if was_skipped else 0)
        self._cursor = shown.item_id if restored else None
        self._shown = shown
        return shown

    def skip(self, item_id: int) -> bool:
        """Move an unrated item to the end of the queue; False (no change) for a rated one."""
        with self.study.session(write=True) as s:
            entry = self._entry(s, item_id)
            if entry.done:
                return False
            last = s.scalar(
                select(func.max(QueueEntry.position)).where(
                    QueueEntry.annotator_id == self.annotator_id
                )
            )
            first_skip = entry.skips == 0
            entry.skips += 1
            entry.position = float(last or 0.0) + 1.0
            record_event(s, "skip", item_id)
        # Committed: only now do the counts move (a failed write leaves them as they were).
        if first_skip:
            self._adjust(skipped=1)
        if self._shown is not None and self._shown.item_id == item_id:
            self._shown = None
        return True

    def flag(self, item_id: int, comment: str | None = None, flagged: bool = True) -> None:
        """Flag (or unflag) an item with an optional comment, rated or not.

        The note is its own row, so a flag survives an undo of the rating; the annotator's
        current ratings of the item carry the same flag and comment for exports.
        """
        comment = (comment or "").strip() or None
        with self.study.session(write=True) as s:
            self._entry(s, item_id)
            s.add(
                ItemNote(
                    item_id=item_id,
                    annotator_id=self.annotator_id,
                    flagged=flagged,
                    comment=comment,
                )
            )
            s.execute(
                update(Rating)
                .where(
                    Rating.item_id == item_id,
                    Rating.annotator_id == self.annotator_id,
                    is_current(),
                )
                .values(flagged=flagged, comment=comment)
            )
            record_event(s, "flag", item_id)
        if self._shown is not None and self._shown.item_id == item_id:
            self._shown = replace(self._shown, flagged=flagged, comment=comment)
