"""Merging the ratings of another copy of a study into this one; nothing is ever overwritten.

Annotators who work on separate copies of a study file bring their copies back and the
study lead merges them. The other file is only read (opened read-only). Items are matched
by dataset name and pair key (which for control items includes their kind and parent),
annotators and dimensions by name.

Per (item, annotator, dimension):
- we have no rating: their ratings come in with their states (current and history);
- a rating identical to one we hold (same value and submission time), or a current rating
  with the value our current one already has, is a duplicate and is left out — merging the
  same file twice changes nothing;
- their current rating differs from our current one: a conflict. Ours stays current;
  theirs is kept as history (state `superseded`, origin `merge-conflict:<file>`) and listed
  in the report, so the study lead can see both values and decide.
Items the other copy has and this one lacks come in when they carry ratings or notes.
Ratings that come in have origin `merge:<file>`, whether they were rated or imported there.

A merge commits `MERGE_CHUNK_ITEMS` items at a time (their ratings, history, spans and
notes together), so the study's raters can save their ratings while a large merge runs.
When it stops half way (a full disk, a kill), the chunks it committed stay, each whole,
and the message says how far it got; merging the same file again brings in the rest, as
what is already here is recognised as a duplicate. Queues count merged ratings as done at
the end (and on the next merge, after an interruption).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, select, text
from sqlalchemy.orm import Session

from meaningbench.annotation.proposals import fates_of, store_fates
from meaningbench.annotation.spans import spans_of, store_spans
from meaningbench.core.wording import counted
from meaningbench.db.access import read_only_uris, study_access
from meaningbench.db.current_ratings import current_rating_sql, holds_current
from meaningbench.db.faults import describe_fault
from meaningbench.db.models import (
    ATTRIBUTE_NAMES_KEY,
    Annotator,
    Dataset,
    Dimension,
    Item,
    ItemNote,
    Rating,
    StudySetting,
)
from meaningbench.db.study import SCHEMA_HEAD, Study, known_revisions
from meaningbench.db.writers import announced_writer
from meaningbench.errors import UserError


@dataclass(frozen=True)
class Conflict:
    item_id: int  # in the target study
    annotator: str
    dimension: str
    ours: float
    theirs: float


@dataclass
class MergeReport:
    other: Path
    items_matched: int = 0
    items_added: int = 0
    annotators_added: list[str] = field(default_factory=list)
    dimensions_added: list[str] = field(default_factory=list)
    ratings_added: int = 0
    # Of `ratings_added`, their earlier values (superseded, undone) kept as history here.
    history_added: int = 0
    duplicates: int = 0
    # Of `duplicates`, ratings of a kit whose state its rater changed since an earlier
    # collect (revised or undone there): our copy now in that state.
    states_followed: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    notes_added: int = 0
    # Ratings left out with the reason, e.g. a dimension on another scale here.
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [
            f"{counted(self.ratings_added, 'rating')} added",
            f"{self.duplicates} already present",
            f"{counted(len(self.conflicts), 'conflict')} kept as history",
        ]
        if self.items_added:
            parts.append(f"{counted(self.items_added, 'item')} added")
        if self.annotators_added:
            parts.append(f"annotators added: {', '.join(self.annotators_added)}")
        if self.notes_added:
            parts.append(f"{counted(self.notes_added, 'note')} added")
        if self.skipped:
            parts.append(f"{counted(len(self.skipped), 'rating')} skipped")
        return "; ".join(parts)


def open_copy(path: Path, *, immutable: bool = False) -> Session:
    """A read-only session on another copy of a study, refused (with the file named) when
    it is no study or is at another schema; the caller closes it and disposes its engine.
    `immutable`: read as a file nothing writes (a returned kit), leaving nothing beside it."""
    if not path.is_file():
        raise UserError(f"{path}: no such study file")
    # Read only, and only through SQLite: the header check included (a plain open and
    # close of a study file can drop this process's SQLite locks on it).
    # On a read-only medium or in a read-only folder, `mode=ro` cannot create the `-shm`
    # it needs: such a study is read as immutable (see meaningbench.db.access).
    access = study_access(path)
    uris = read_only_uris(path) if not access.writable else [f"{path.resolve().as_uri()}?mode=ro"]
    if immutable:
        uris = [f"{path.resolve().as_uri()}?immutable=1"]
    for uri in uris:
        engine = create_engine("sqlite://", creator=lambda uri=uri: sqlite3.connect(uri, uri=True))
        try:
            with engine.connect() as conn:
                rev = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            break
        except Exception as exc:
            engine.dispose()
            failure = exc
    else:
        fault = describe_fault(failure, path)
        if fault is not None and not _is_not_a_database(failure):
            raise fault from None
        what = "not an SQLite file" if _is_not_a_database(failure) else "no schema version"
        raise UserError(f"{path}: not a MeaningBench study ({what})") from None
    if rev != SCHEMA_HEAD:
        engine.dispose()
        raise UserError(_schema_message(path, str(rev)))
    return Session(engine)


def _is_not_a_database(exc: BaseException) -> bool:
    return "not a database" in str(exc)


def _schema_message(path: Path, rev: str) -> str:
    if rev in known_revisions():
        return (
            f"{path}: written by an older MeaningBench (schema {rev}, this one has "
            f"{SCHEMA_HEAD}); open that copy once in this MeaningBench, which upgrades it "
            "(keeping a backup), then merge again"
        )
    return (
        f"{path}: written by a newer MeaningBench (schema {rev}; this one knows schemas up "
        f"to {SCHEMA_HEAD}); nothing was merged. Update MeaningBench to merge that copy."
    )


def _stamp(value: object) -> str:
    return str(value)


# Items whose ratings, notes and spans one transaction brings in. The write lock is let go
# between chunks, so a rater saving a rating meanwhile waits for one chunk at most (well
# under a second on a laptop), never for the whole merge.
MERGE_CHUNK_ITEMS = 500
# How long the lock stays free between chunks. A writer waiting for it sleeps in SQLite's
# busy handler, whose naps grow to 100 ms; without a gap longer than that, the next chunk
# would take the lock before the waiter wakes, chunk after chunk, to the end of the merge.
CHUNK_GAP_S = 0.12


class MergeInterrupted(UserError):
    """A merge that stopped after some chunks were committed; they stay, and merging the
    same file again brings in the rest (what is already here is recognised)."""


def merge_ratings(
    target: Study,
    other_path: str | Path,
    *,
    chunk_items: int = MERGE_CHUNK_ITEMS,
    chunk_gap_s: float = CHUNK_GAP_S,
    kit: bool = False,
    follow_rater: bool = False,
    finish: Callable[[Session, MergeReport], None] | None = None,
) -> MergeReport:
    """Bring the other study's ratings and notes into `target`, `chunk_items` items per
    transaction, the lock free for `chunk_gap_s` between them (0 for a private copy no one
    else writes to; see the module notes on a merge that is interrupted).

    `kit`: the other file is a returned rater kit, read as immutable; only its ratings,
    spans and notes come in, never an item, an item's attributes or a dimension.
    `follow_rater`: the kit is its rater's latest word (no older than a copy collected
    before): our copies of its ratings take the state, flag and comment it holds.
    `finish` writes what goes with the merge (a kit's return record) in the transaction of
    its last ratings, so the two are stored together or not at all."""
    other_path = Path(other_path)
    if other_path.exists() and os.path.samefile(other_path, target.path):
        raise UserError("A study cannot be merged into itself.")
    report = MergeReport(other=other_path)
    origin = f"merge:{other_path.name}"
    src = open_copy(other_path, immutable=kit)
    done = 0
    try:
        their_ratings = src.scalars(select(Rating).order_by(Rating.id)).all()
        their_notes = src.scalars(select(ItemNote).order_by(ItemNote.id)).all()
        their_items = {i.id: i for i in src.scalars(select(Item)).all()}
        their_datasets = {d.id: d for d in src.scalars(select(Dataset)).all()}
        needed = _needed_items(their_ratings, their_notes, their_items)
        # Regular items first, so that a control's parent is mapped before the control.
        order = sorted(needed, key=lambda i: (their_items[i].parent_id is not None, i))
        chunks = [order[k : k + chunk_items] for k in range(0, len(order), chunk_items)]
        # Each transaction takes the write lock up front (it reads, then writes) and names
        # this process while it holds it, for anyone waiting (see meaningbench.db.writers).
        with target.session(write=True) as dst, announced_writer(target.path, "merge"):
            state = _MergeState(
                annotator_map=_map_annotators(src, dst, report),
                dims=_map_dimensions(src, dst, report),
                names={a.id: a.name for a in dst.scalars(select(Annotator))},
                kit=kit,
                follow=follow_rater,
            )
        ratings_of: dict[int, list[Rating]] = defaultdict(list)
        for r in their_ratings:
            ratings_of[r.item_id].append(r)
        notes_of: dict[int, list[ItemNote]] = defaultdict(list)
        for n in their_notes:
            notes_of[n.item_id].append(n)
        for number, chunk in enumerate(chunks):
            if number and chunk_gap_s:
                time.sleep(chunk_gap_s)
            with target.session(write=True) as dst, announced_writer(target.path, "merge"):
                item_map = _map_items(dst, report, chunk, their_items, their_datasets, state)
                ratings = sorted((r for i in chunk for r in ratings_of[i]), key=lambda r: r.id)
                notes = sorted((n for i in chunk for n in notes_of[i]), key=lambda n: n.id)
                _merge(src, dst, report, origin, other_path.name, ratings, notes, item_map, state)
                if number == len(chunks) - 1:
                    _last_steps(dst, report, state, finish)
            done += len(chunk)
        if not chunks:
            with target.session(write=True) as dst:
                _last_steps(dst, report, state, finish)
    except BaseException as exc:
        if done:
            raise _interrupted(target.path, exc, done, len(needed)) from exc
        raise
    finally:
        bind = src.get_bind()
        src.close()
        bind.dispose()  # type: ignore[union-attr]
    return report


def _last_steps(
    dst: Session,
    report: MergeReport,
    state: _MergeState,
    finish: Callable[[Session, MergeReport], None] | None,
) -> None:
    """What goes in the transaction of the last ratings: the queues brought in line, the
    rater's withdrawals followed, and the caller's `finish`."""
    dst.flush()
    _sync_queues(dst)
    if state.follow:
        _reopen_withdrawn(dst, set(state.annotator_map.values()))
    if finish is not None:
        finish(dst, report)


def _interrupted(path: Path, exc: BaseException, done: int, total: int) -> BaseException:
    fault = describe_fault(exc, path)
    if fault is None and not isinstance(exc, UserError):
        return exc  # a bug, or Ctrl+C: as it is
    why = str(fault if fault is not None else exc)
    return MergeInterrupted(
        f"{why.rstrip('.')}. The merge stopped after bringing in the ratings of {done:,} of "
        f"{total:,} items, which are kept; merge the same file again to bring in the rest "
        "(what is already here is recognised and not added twice)."
    )


@dataclass
class _MergeState:
    """What the chunks of one merge share: the mappings made once, and our items."""

    annotator_map: dict[int, int]
    dims: tuple[dict[int, int], dict[int, str]]
    names: dict[int, str]
    item_map: dict[int, int] = field(default_factory=dict)
    ours: dict[tuple[str, str, str], int] | None = None
    datasets: dict[str, int] | None = None
    kit: bool = False
    follow: bool = False


def _merge(
    src: Session,
    dst: Session,
    report: MergeReport,
    origin: str,
    name: str,
    their_ratings: Sequence[Rating],
    their_notes: Sequence[ItemNote],
    item_map: dict[int, int],
    state: _MergeState,
) -> None:
    annotator_map = state.annotator_map
    dim_map, dim_names = state.dims
    names = state.names

    ours: dict[tuple[int, int, int], list[Rating]] = defaultdict(list)
    for r in dst.scalars(select(Rating).where(Rating.item_id.in_(set(item_map.values())))):
        ours[(r.item_id, r.annotator_id, r.dimension_id)].append(r)

    rating_map: dict[int, Rating] = {}
    links: list[tuple[Rating, int | None]] = []
    new_rows: set[Rating] = set()
    for theirs in their_ratings:
        if theirs.dimension_id not in dim_map:
            report.skipped.append(
                f"rating {theirs.id}: dimension {dim_names[theirs.dimension_id]!r} has "
                "another scale in this study"
            )
            continue
        key = (
            item_map[theirs.item_id],
            annotator_map[theirs.annotator_id],
            dim_map[theirs.dimension_id],
        )
        held = ours[key]
        same, current = _rating_held(held, theirs)
        if same is not None:
            if state.follow and _follow_rater(same, theirs, held):
                report.states_followed += 1
            # A later rating of theirs that superseded this one then points at our copy.
            rating_map[theirs.id] = same
            report.duplicates += 1
            continue
        row = _copy_rating(theirs, key, current, report, origin, name, names, dim_names)
        dst.add(row)
        rating_map[theirs.id] = row
        new_rows.add(row)
        links.append((row, theirs.supersedes_id))
        held.append(row)
        report.ratings_added += 1
    # One flush for all the new rows, then the history links between them (ids known now).
    dst.flush()
    _link_history(links, rating_map)
    _copy_spans(src, dst, rating_map, new_rows)

    _merge_notes(dst, report, their_notes, item_map, annotator_map)


def _needed_items(
    their_ratings: Sequence[Rating], their_notes: Sequence[ItemNote], their_items: dict[int, Item]
) -> set[int]:
    """Their items that ratings or notes are on, with the originals of control items."""
    needed = {r.item_id for r in their_ratings} | {n.item_id for n in their_notes}
    # Parents of needed control items are needed too (a control points at its original).
    for item_id in list(needed):
        parent = their_items[item_id].parent_id
        if parent is not None:
            needed.add(parent)
    return needed


def _rating_held(held: list[Rating], theirs: Rating) -> tuple[Rating | None, Rating | None]:
    """(our copy of their rating if we hold it, our current rating of the same key)."""
    same = next(
        (
            r
            for r in held
            if r.value == theirs.value and _stamp(r.submitted_at) == _stamp(theirs.submitted_at)
        ),
        None,
    )
    current = next((r for r in held if holds_current(r)), None)
    if same is None and holds_current(theirs) and current is not None:
        same = current if current.value == theirs.value else None
    return same, current


def _follow_rater(ours: Rating, theirs: Rating, held: list[Rating]) -> bool:
    """A kit is its rater's word on their own ratings: our copy of one of them takes the
    state the rater left it in (revised or undone in the kit since an earlier collect), so
    that their revision comes in as the rating in force, not as a conflict; and the flag
    and comment they gave it since (exports read them on the rating). Never a conflict row
    of ours, and never a second current rating of the same key. True: the state changed."""
    if ours.origin.startswith("merge-conflict:"):
        return False
    ours.flagged, ours.comment = theirs.flagged, theirs.comment
    if ours.state == theirs.state:
        return False
    if holds_current(theirs) and any(holds_current(r) for r in held if r is not ours):
        return False
    ours.state = theirs.state
    return True


def _copy_rating(
    theirs: Rating,
    key: tuple[int, int, int],
    current: Rating | None,
    report: MergeReport,
    origin: str,
    name: str,
    names: dict[int, str],
    dim_names: dict[int, str],
) -> Rating:
    """Our row for a rating of theirs; beside our current rating it is a superseded conflict."""
    state = theirs.state
    # The copy it came from, whatever brought it into that copy (rated, imported there).
    row_origin = origin
    if not holds_current(theirs):
        report.history_added += 1
    elif current is not None:
        state = "superseded"
        row_origin = f"merge-conflict:{name}"
        report.conflicts.append(
            Conflict(
                key[0],
                names[key[1]],
                dim_names[theirs.dimension_id],
                current.value,
                theirs.value,
            )
        )
    return Rating(
        item_id=key[0],
        annotator_id=key[1],
        dimension_id=key[2],
        value=theirs.value,
        start_value=theirs.start_value,
        shown_at=theirs.shown_at,
        submitted_at=theirs.submitted_at,
        duration_ms=theirs.duration_ms,
        flagged=theirs.flagged,
        comment=theirs.comment,
        state=state,
        supersedes_id=None,
        origin=row_origin,
        n_raters=theirs.n_raters,
        display=theirs.display,
    )


def _link_history(links: list[tuple[Rating, int | None]], rating_map: dict[int, Rating]) -> None:
    for row, old_id in links:
        prior = rating_map.get(old_id) if old_id is not None else None
        if prior is not None:
            row.supersedes_id = prior.id


def _copy_spans(
    src: Session, dst: Session, rating_map: dict[int, Rating], new_rows: set[Rating]
) -> None:
    # Error spans travel with the ratings that came in (their offsets are the items' own).
    added = {their_id: row for their_id, row in rating_map.items() if row in new_rows}
    for their_id, spans in spans_of(src, list(added)).items():
        store_spans(dst, added[their_id].id, spans)
    # And so do the records of pre-filled spans: which model proposed each, and its fate.
    for their_id, fates in fates_of(src, list(added)).items():
        store_fates(dst, added[their_id].id, fates)


def _add_missing_attributes(dst: Session, item_id: int, their_meta: dict[str, Any] | None) -> None:
    """Attributes (categories) the other copy's item has and ours lacks come in; a value
    we hold is never overwritten."""
    theirs = (their_meta or {}).get("attributes") or {}
    if not theirs:
        return
    row = dst.get(Item, item_id)
    assert row is not None
    meta = dict(row.meta or {})
    ours = dict(meta.get("attributes") or {})
    missing = {k: v for k, v in theirs.items() if k not in ours}
    if missing:
        meta["attributes"] = {**ours, **missing}
        row.meta = meta
        _note_attribute_names(dst, missing)


def _note_attribute_names(dst: Session, names: Iterable[str]) -> None:
    """The study's list of attribute names (`ATTRIBUTE_NAMES_KEY`) grows by these."""
    setting = dst.get(StudySetting, ATTRIBUTE_NAMES_KEY)
    known = list(setting.value or []) if setting is not None else []
    merged = sorted(set(known) | set(names))
    if merged == known:
        return
    if setting is None:
        dst.add(StudySetting(key=ATTRIBUTE_NAMES_KEY, value=merged))
    else:
        setting.value = merged


def _map_items(
    dst: Session,
    report: MergeReport,
    chunk: Sequence[int],
    their_items: dict[int, Item],
    their_datasets: dict[int, Dataset],
    state: _MergeState,
) -> dict[int, int]:
    """Our id for each of their items in `chunk` (added where we lack it); `state` keeps
    what earlier chunks mapped, so a control finds its parent."""
    if state.ours is None or state.datasets is None:
        state.datasets = {d.name: d.id for d in dst.scalars(select(Dataset)).all()}
        state.ours = {
            (dname, key, kind): iid
            for iid, dname, key, kind in dst.execute(
                select(Item.id, Dataset.name, Item.pair_key, Item.kind).join(
                    Dataset, Dataset.id == Item.dataset_id
                )
            )
        }
    datasets, ours, item_map = state.datasets, state.ours, state.item_map
    for item_id in chunk:
        it = their_items[item_id]
        dset = their_datasets[it.dataset_id]
        found = ours.get((dset.name, it.pair_key, it.kind))
        if found is not None:
            item_map[item_id] = found
            report.items_matched += 1
            if not state.kit:
                _add_missing_attributes(dst, found, it.meta)
            continue
        if state.kit:
            raise UserError(f"{report.other}: item {dset.name}/{it.pair_key} is not in this study")
        if dset.name not in datasets:
            made = Dataset(
                name=dset.name, source_file=dset.source_file, format=dset.format, meta=dset.meta
            )
            dst.add(made)
            dst.flush()
            datasets[dset.name] = made.id
        row = Item(
            dataset_id=datasets[dset.name],
            source=it.source,
            output=it.output,
            references=it.references,
            system=it.system,
            source_group=it.source_group,
            pair_key=it.pair_key,
            kind=it.kind,
            parent_id=item_map.get(it.parent_id) if it.parent_id is not None else None,
            external_id=it.external_id,
            meta=it.meta,
        )
        _note_attribute_names(dst, (it.meta or {}).get("attributes") or {})
        dst.add(row)
        dst.flush()
        item_map[item_id] = row.id
        ours[(dset.name, it.pair_key, it.kind)] = row.id
        report.items_added += 1
    return {i: item_map[i] for i in chunk}


def _map_annotators(src: Session, dst: Session, report: MergeReport) -> dict[int, int]:
    ours = {a.name: a.id for a in dst.scalars(select(Annotator))}
    out = {}
    for a in src.scalars(select(Annotator)):
        if a.name not in ours:
            # The queue bookkeeping (slot, batches) belongs to the other copy; not carried.
            row = Annotator(name=a.name, kind=a.kind, meta={})
            dst.add(row)
            dst.flush()
            ours[a.name] = row.id
            report.annotators_added.append(a.name)
        out[a.id] = ours[a.name]
    return out


def _map_dimensions(
    src: Session, dst: Session, report: MergeReport
) -> tuple[dict[int, int], dict[int, str]]:
    ours = {d.name: d for d in dst.scalars(select(Dimension))}
    out, names = {}, {}
    for d in src.scalars(select(Dimension)):
        names[d.id] = d.name
        mine = ours.get(d.name)
        if mine is None:
            mine = Dimension(
                name=d.name,
                scale=d.scale,
                min_value=d.min_value,
                max_value=d.max_value,
                label_low=d.label_low,
                label_high=d.label_high,
                question=d.question,
                position=d.position,
                active=False,  # the study lead decides whether raters here see it
            )
            dst.add(mine)
            dst.flush()
            report.dimensions_added.append(d.name)
        if mine.scale == d.scale:
            out[d.id] = mine.id
    return out, names


def _merge_notes(
    dst: Session,
    report: MergeReport,
    notes: Sequence[ItemNote],
    item_map: dict[int, int],
    annotator_map: dict[int, int],
) -> None:
    held = {
        (n.item_id, n.annotator_id, bool(n.flagged), n.comment, _stamp(n.created_at))
        for n in dst.scalars(select(ItemNote))
    }
    for n in notes:
        annotator = annotator_map.get(n.annotator_id) if n.annotator_id is not None else None
        key = (item_map[n.item_id], annotator, bool(n.flagged), n.comment, _stamp(n.created_at))
        if key in held:
            continue
        dst.add(
            ItemNote(
                item_id=key[0],
                annotator_id=annotator,
                flagged=n.flagged,
                comment=n.comment,
                created_at=n.created_at,
            )
        )
        held.add(key)
        report.notes_added += 1


def _sync_queues(dst: Session) -> None:
    """Queue entries of items that now hold a current rating by their annotator count as done."""
    dst.flush()
    dst.execute(
        text(
            f"""
            UPDATE queue_entry SET done = 1
            WHERE done = 0 AND EXISTS (
                SELECT 1 FROM rating r
                WHERE r.item_id = queue_entry.item_id
                  AND r.annotator_id = queue_entry.annotator_id
                  AND {current_rating_sql()})
            """
        )
    )


def _reopen_withdrawn(dst: Session, annotators: set[int]) -> None:
    """Queue entries of a kit's rater whose rating the rater withdrew (undone in the kit)
    are open again, as in the kit: a kit made again for them offers those items again."""
    if not annotators:
        return
    marks = ", ".join(str(int(a)) for a in sorted(annotators))
    dst.flush()
    dst.execute(
        text(
            f"""
            UPDATE queue_entry SET done = 0
            WHERE done = 1 AND annotator_id IN ({marks}) AND NOT EXISTS (
                SELECT 1 FROM rating r
                WHERE r.item_id = queue_entry.item_id
                  AND r.annotator_id = queue_entry.annotator_id
                  AND {current_rating_sql()})
            """
        )
    )
