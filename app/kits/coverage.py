"""How many of its k ratings each item holds: what a campaign still needs.

k is the study's overlap (each item goes to k raters); without an overlap every rater with
a queue rates every item, so k is the number of those raters. An item's count is the number
of named raters holding a current rating of it (on any dimension), the items being the
regular items the queues draw from (the study's chosen datasets).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import distinct, func, select
from sqlalchemy.orm import Session

from meaningbench.annotation.settings import load_settings
from meaningbench.db.current_ratings import is_current
from meaningbench.db.models import Annotator, Dataset, Item, QueueEntry, Rating


@dataclass(frozen=True)
class ItemCoverage:
    item_id: int
    dataset: str
    pair_key: str
    source: str  # the original text, so that the lead can tell the items apart
    ratings: int  # named raters with a current rating of the item
    raters: tuple[str, ...]


def required_k(session: Session) -> int:
    settings = load_settings(session)
    if settings.overlap_k is not None:
        return settings.overlap_k
    with_queue = session.scalar(select(func.count(distinct(QueueEntry.annotator_id))))
    return max(1, int(with_queue or 0))


def item_coverage(session: Session) -> list[ItemCoverage]:
    """Every regular item of the queues with the named raters who rated it, in id order."""
    settings = load_settings(session)
    query = (
        select(Item.id, Dataset.name, Item.pair_key, Item.source)
        .join(Dataset, Dataset.id == Item.dataset_id)
        .where(Item.kind == "regular")
    )
    if settings.datasets is not None:
        query = query.where(Dataset.name.in_(settings.datasets))
    items = session.execute(query.order_by(Item.id)).all()
    raters: dict[int, set[str]] = {}
    rated = (
        select(Rating.item_id, Annotator.name)
        .join(Annotator, Annotator.id == Rating.annotator_id)
        .where(is_current(), Annotator.kind == "named")
    )
    for item_id, name in session.execute(rated):
        raters.setdefault(int(item_id), set()).add(str(name))
    out = []
    for item_id, dataset, key, source in items:
        names = tuple(sorted(raters.get(int(item_id), ())))
        out.append(
            ItemCoverage(int(item_id), str(dataset), str(key), str(source), len(names), names)
        )
    return out


def short_items(session: Session) -> list[ItemCoverage]:
    """The items holding fewer than k ratings."""
    k = required_k(session)
    return [c for c in item_coverage(session) if c.ratings < k]
