"""Per-annotator queues: which items, which hidden controls, in which fixed order.

A queue is built once, when an annotator first opens the study, and stored as
`queue_entry` rows; from then on the order never changes except that a skipped item moves
to the end. Items imported later are appended as a new shuffled batch with their own
controls. The order is a pure function of the study's seed, the annotator's name and the
items, so two copies of a study give an annotator the same queue.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from meaningbench.annotation.ordering import insert_repeats, repeat_gap, spread_groups
from meaningbench.annotation.qc_items import ControlFactory, Parent
from meaningbench.annotation.selection import done_runs, resolve_runs, stored_scores
from meaningbench.annotation.selection import order as selection_order
from meaningbench.annotation.settings import (
    SCORELESS_SELECTIONS,
    AnnotationSettings,
    ensure_seed,
    load_settings,
)
from meaningbench.db.current_ratings import is_current
from meaningbench.db.models import Annotator, Dataset, Item, QueueEntry, Rating


@dataclass(frozen=True)
class Slot:
    """One place in a queue being planned: the item and the source group it belongs to."""

    item_id: int
    group: str


def _int_digest(*parts: object) -> int:
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(str(part).encode("utf-8"))
        h.update(b"\x1f")
    return int.from_bytes(h.digest(), "big")


def annotator_seed(study_seed: int, annotator_name: str, batch: int) -> int:
    """Each annotator (and each appended batch) gets its own stream from the study's seed."""
    return _int_digest(study_seed, annotator_name, batch)


def get_or_create_annotator(session: Session, name: str) -> Annotator:
    name = name.strip()
    row = session.scalar(select(Annotator).where(Annotator.name == name))
    if row is None:
        row = Annotator(name=name, kind="named", meta={})
        session.add(row)
        session.flush()
    return row


def _slot_of(session: Session, annotator: Annotator) -> int:
    """The annotator's overlap slot: the order in which annotators first got a queue."""
    meta = dict(annotator.meta or {})
    if "slot" not in meta:
        others = session.scalars(
            select(Annotator.meta).where(Annotator.kind == "named", Annotator.id != annotator.id)
        ).all()
        meta["slot"] = sum(1 for m in others if isinstance(m, dict) and "slot" in m)
        annotator.meta = meta
    return int(meta["slot"])


def regular_items(session: Session, settings: AnnotationSettings) -> list[Parent]:
    """The regular items the study's queues draw from (its chosen datasets), in id order."""
    query = select(
        Item.id,
        Item.dataset_id,
        Item.source,
        Item.output,
        Item.system,
        Item.source_group,
        Item.pair_key,
    ).where(Item.kind == "regular")
    if settings.datasets is not None:
        query = query.join(Dataset, Dataset.id == Item.dataset_id).where(
            Dataset.name.in_(settings.datasets)
        )
    return [Parent(*row) for row in session.execute(query.order_by(Item.id)).all()]


def assigned_items(
    session: Session, annotator: Annotator, settings: AnnotationSettings, seed: int
) -> list[Parent]:
    """The regular items this annotator rates, in id order.

    With overlap k of n, each item starts at a slot fixed by a hash of its key and goes to
    the k slots from there; annotator i holds slot i mod n. Hashing (not a permutation)
    keeps every earlier assignment when items are added later.
    """
    rows = regular_items(session, settings)
    if settings.overlap_k is None:
        return rows
    n = max(settings.pool_size, settings.overlap_k)
    slot = _slot_of(session, annotator) % n
    k = settings.overlap_k
    return [p for p in rows if (slot - _int_digest(seed, p.pair_key)) % n < k]


def selection_ranks(session: Session, settings: AnnotationSettings, seed: int) -> dict[int, int]:
    """Item id → its place in the study's selection order (`settings.selection`), from the
    stored scores of the selection's metric runs (none for a selection that reads no score),
    the items' systems and sources, and `seed`; no human rating is read."""
    items = regular_items(session, settings)
    runs = []
    if settings.selection not in SCORELESS_SELECTIONS:
        runs = resolve_runs(done_runs(session), settings.selection_metrics)
    scores = stored_scores(session, [p.id for p in items], runs)
    groups = [p.source_group for p in items]
    ranked = selection_order(settings.selection, scores, groups, seed, [p.system for p in items])
    return {items[i].id: place for place, i in enumerate(ranked)}


def _pick(rng: random.Random, pool: list[Parent], n: int) -> list[Parent]:
    return rng.sample(pool, min(n, len(pool)))


def plan_batch(
    session: Session,
    new: list[Parent],
    settings: AnnotationSettings,
    rng: random.Random,
    factory: ControlFactory,
    ranks: dict[int, int] | None = None,
) -> list[int]:
    """The item ids of one batch of the queue, controls included, in their shown order.

    `ranks` (item id → place; None: the random order) puts the regular items in the
    selection's order, with the controls at random places among them."""
    slots = [Slot(p.id, p.source_group) for p in new]
    if settings.qc_enabled:
        counts = settings.qc.counts_for(len(new))
        made = []
        for variant in ("degraded", "identical", "unrelated", "word_soup"):
            for parent in _pick(rng, new, counts[variant]):
                item = factory.make(variant, parent)
                if item is not None:
                    made.append(item)
        session.flush()
        slots.extend(Slot(item.id, item.source_group) for item in made)
        n_repeat = counts["repeat"]
    else:
        n_repeat = 0
    if ranks is None:
        rng.shuffle(slots)
    else:
        slots = _ranked(slots, {p.id for p in new}, ranks, rng)
    if not settings.same_source_back_to_back:
        slots = spread_groups(slots, lambda s: s.group)
    if n_repeat:
        # Originals come from the first half (or what the gap leaves): room for the repeat
        # at least a gap later, between items of other sources.
        gap = repeat_gap(len(slots))
        early = {s.item_id for s in slots[: max(1, min(len(slots) // 2, len(slots) - gap - 1))]}
        by_id = {p.id: p for p in new}
        candidates = [by_id[i] for i in sorted(early) if i in by_id]
        made_repeats = []
        for parent in _pick(rng, candidates, n_repeat):
            item = factory.make("repeat", parent)
            if item is not None:
                made_repeats.append((item, parent))
        session.flush()
        slot_of = {s.item_id: s for s in slots}
        pairs = [
            (Slot(item.id, item.source_group), slot_of[parent.id]) for item, parent in made_repeats
        ]
        slots = insert_repeats(slots, pairs, lambda s: s.group, rng)
    # A fallback (unrelated → word soup) can meet the same control twice: keep the first.
    return list(dict.fromkeys(s.item_id for s in slots))


def _ranked(
    slots: list[Slot], regular: set[int], ranks: dict[int, int], rng: random.Random
) -> list[Slot]:
    """The regular slots by rank, each control inserted at a random place among them."""
    out = sorted((s for s in slots if s.item_id in regular), key=lambda s: ranks[s.item_id])
    for control in (s for s in slots if s.item_id not in regular):
        out.insert(rng.randint(0, len(out)), control)
    return out


def rated_item_ids(session: Session, annotator_id: int) -> set[int]:
    """The items an annotator has a current rating on: the entries that start done when the
    queue is built (a merge, an import under the same name)."""
    return set(
        session.scalars(
            select(Rating.item_id).where(Rating.annotator_id == annotator_id, is_current())
        )
    )


def ensure_queue(session: Session, annotator: Annotator) -> int:
    """Build the annotator's queue, or append items added since; returns entries added."""
    settings = load_settings(session)
    seed = ensure_seed(session)
    settings.seed = seed
    assigned = assigned_items(session, annotator, settings, seed)
    have = set(
        session.scalars(select(QueueEntry.item_id).where(QueueEntry.annotator_id == annotator.id))
    )
    new = [p for p in assigned if p.id not in have]
    if not new:
        return 0
    meta = dict(annotator.meta or {})
    batch = int(meta.get("queue_batches", 0))
    rng = random.Random(annotator_seed(seed, annotator.name, batch))
    factory = ControlFactory(session, assigned, rng)
    ranks = None
    if settings.selection != "random":
        ranks = selection_ranks(session, settings, annotator_seed(seed, annotator.name, batch))
    order = [i for i in plan_batch(session, new, settings, rng, factory, ranks) if i not in have]
    start = session.scalar(
        select(func.max(QueueEntry.position)).where(QueueEntry.annotator_id == annotator.id)
    )
    base = 0.0 if start is None else float(start) + 1.0
    rated = rated_item_ids(session, annotator.id)
    # Core insert: ten thousand ORM objects would take most of a second.
    session.execute(
        insert(QueueEntry),
        [
            dict(
                annotator_id=annotator.id,
                item_id=item_id,
                position=base + i,
                skips=0,
                done=item_id in rated,
            )
            for i, item_id in enumerate(order)
        ],
    )
    meta["queue_batches"] = batch + 1
    meta["queue_seed"] = seed
    annotator.meta = meta
    session.flush()
    return len(order)
