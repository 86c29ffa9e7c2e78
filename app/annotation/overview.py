"""Who annotates this study and how far each has come (the annotator picker lists it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from meaningbench.annotation.queue import rated_item_ids
from meaningbench.db.current_ratings import is_current
from meaningbench.db.models import Annotator, QueueEntry, Rating


@dataclass(frozen=True)
class AnnotatorSummary:
    name: str
    rated: int  # queue entries done (no queue yet: items with a current rating)
    total: int  # queue entries (0: no queue yet, e.g. an annotator known from an import)
    last_rating: datetime | None

    def progress_text(self) -> str:
        """How far the rater has come, as their queue will count it when it opens."""
        if self.total:
            return f"{self.rated} of {self.total} rated"
        if self.rated:
            # No queue yet, but ratings (merged or imported): they start done in the queue.
            return f"{self.rated} rated · queue made when opened"
        return "not started"


def annotator_overview(session: Session) -> list[AnnotatorSummary]:
    """Human annotators by name, with queue progress and the time of their latest rating."""
    queues = {
        aid: (int(done), int(total))
        for aid, done, total in session.execute(
            select(
                QueueEntry.annotator_id,
                func.count().filter(QueueEntry.done.is_(True)),
                func.count(),
            ).group_by(QueueEntry.annotator_id)
        )
    }
    last = dict(
        session.execute(
            select(Rating.annotator_id, func.max(Rating.submitted_at))
            .where(is_current())
            .group_by(Rating.annotator_id)
        ).all()
    )
    rows = session.execute(
        select(Annotator.id, Annotator.name)
        .where(Annotator.kind == "named")
        .order_by(Annotator.name)
    ).all()
    return [
        AnnotatorSummary(
            name=name,
            rated=queues[aid][0] if aid in queues else len(rated_item_ids(session, aid)),
            total=queues.get(aid, (0, 0))[1],
            last_rating=last.get(aid),
        )
        for aid, name in rows
    ]
