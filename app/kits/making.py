"""Making rater kits: one study file per rater, holding that rater's queue and nothing more.

A kit is a copy of the lead's study (made through SQLite's backup API) from which
everything the rater should not see is deleted before it is written out: other raters'
ratings, notes and practice answers, the other raters themselves (and with them the
aggregate labels and label sets), metric runs and scores, scenes, registered models, and
every item outside the rater's queue. The queue keeps its hidden controls; practice with
its gold, the protocol and the guidelines stay. The kit is then made blind
(`meaningbench.kits.blind`: no kind, parent, system or quality-control setting in it, its
item ids, keys and order its own) and vacuumed, so no deleted page lingers in it. The
kit's queue takes every item it holds (no overlap in the kit: the lead's study made that
choice).

A kit holds only what its rater needs: no item attributes (a file's unmapped columns, a
gold label among them) and no path of the lead's imported files. A rater whose earlier
kit came back with ratings has done the practice: their next kits hold none.

A top-up kit holds items still short of k ratings, shared among the chosen raters (each
item goes to raters who have neither rated it nor hold it in their queue); it is the
rater's next round, `NAME-top-up-N.mbkit`.

A kit already in the folder under a new kit's name is never replaced when it holds
ratings, and otherwise only when asked (`replace`); a kit this study never recorded (left
by a `kit` stopped before its record) is replaced without asking.

All kits of one call are built in a hidden folder beside `out` and take their place
together once every one is complete (`meaningbench.core.atomic_file.files_in_place`); the
lead's study records them only then. Stopped between the two, the folder holds kits the
study never recorded (never collected, replaced by the next `kit`), never a record of a
kit that does not exist, nor a top-up's items in a queue without their kit.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from meaningbench.annotation.kit_log import new_log_key, start_log_in
from meaningbench.annotation.queue import ensure_queue, get_or_create_annotator
from meaningbench.annotation.settings import (
    QC_KINDS,
    SETTINGS_KEY,
    AnnotationSettings,
    QCMix,
    load_settings,
)
from meaningbench.core.atomic_file import files_in_place
from meaningbench.core.wording import counted
from meaningbench.datasets.language import LANGUAGE_KEY
from meaningbench.db.models import Annotator, Base, Item, QueueEntry, utcnow
from meaningbench.db.setting_keys import NAME_KEY
from meaningbench.db.study import Study, copy_study
from meaningbench.db.study_id import study_id_in
from meaningbench.errors import UserError
from meaningbench.kits.adaptive import TopUpChoice, adaptive_item_order
from meaningbench.kits.blind import BlindKey, blind_identities, kit_rng, make_blind
from meaningbench.kits.coverage import ItemCoverage, required_k, short_items
from meaningbench.kits.judge_spans import blind_judge_scores, unjudged_refusal
from meaningbench.kits.practice_made import practice_in
from meaningbench.kits.record import (
    KIT_SUFFIX,
    MARKER_KEY,
    KitMarker,
    KitRecord,
    ensure_secret,
    kit_records,
    read_marker,
    signature,
    store_records,
)

# The study settings a kit keeps; the others (label set, study id, the lead's kits and
# secret, the names of the items' attributes) stay with the lead.
KIT_SETTINGS = (SETTINGS_KEY, LANGUAGE_KEY, NAME_KEY)
# Tables emptied whole: nothing in them belongs to a rater.
EMPTIED = ("score", "metric_run", "scene", "registered_model")


@dataclass(frozen=True)
class KitPlan:
    """One kit to write: whose, which queue entries (item id, position, done), under which ids."""

    rater: str
    annotator_id: int
    queue: list[tuple[int, float, bool]]
    marker: KitMarker
    file: str
    round: int  # 0: the rater's queue; 1, 2, ...: their top-ups
    practised: bool  # an earlier kit of theirs came back rated: no practice in this one
    # The first key of the kit's log of ratings (`meaningbench.annotation.kit_log`).
    log_key: str = field(default_factory=new_log_key)


@dataclass(frozen=True)
class MadeKit:
    rater: str
    path: Path
    kit_id: str
    items: int  # queue entries, controls included
    top_up: bool


def parse_raters(text: str) -> list[str]:
    """`ana,ben, carla` → the names, each once, in order; an empty name is refused."""
    names = [n.strip() for n in text.split(",")]
    # A name is also the kit's file name: nothing that would reach into another folder.
    if any(n.startswith(".") or "/" in n or "\\" in n for n in names):
        raise UserError(
            f"--raters {text!r}: a rater's name may not hold / or \\ or start with a dot."
        )
    if not names or any(not n for n in names):
        raise UserError(
            f"--raters {text!r}: give the raters' names separated by commas, e.g. ana,ben."
        )
    return list(dict.fromkeys(names))


class KitsInTheWay(UserError):
    """Kits with no ratings in them already in the folder under the new kits' names:
    replaced only when asked (the command's --replace, the dialog's question)."""

    def __init__(self, folder: Path, paths: Sequence[Path]) -> None:
        self.paths = list(paths)
        names = ", ".join(p.name for p in self.paths)
        verb = "is" if len(self.paths) == 1 else "are"
        super().__init__(
            f"{folder}: {names} {verb} already there (made earlier, no ratings in "
            f"{'it' if len(self.paths) == 1 else 'them'}); nothing was written"
        )


def make_kits(
    study: Study,
    raters: Sequence[str],
    out: Path,
    *,
    top_up: bool = False,
    replace: bool = False,
    choice: TopUpChoice | None = None,
) -> list[MadeKit]:
    """Write a kit per rater into `out` (made if missing); returns what was written.
    `replace`: kits without ratings already there under the new names are replaced;
    `choice`: which short items a top-up hands out, in which order (default: all)."""
    if choice is not None:
        choice.check()
        if not top_up and choice != TopUpChoice():
            raise UserError("--adaptive and --items choose a top-up's items: add --top-up")
    _check_lead(study)
    # A refusal rolls the planning back: no rater, queue or study id is made for kits not
    # written (but for kits whose controls the judge has not scored: `kits.judge_spans`).
    with study.session(write=True) as s:
        study_id = study_id_in(s)
        records = kit_records(s)
        plans = (
            _top_up_plans(s, raters, study_id, records, choice or TopUpChoice())
            if top_up
            else _queue_plans(s, raters, study_id, records)
        )
        if not plans:
            raise UserError(_no_top_up(s, raters))
        _check_targets(out, plans, study_id, records, replace)
        unjudged = unjudged_refusal(
            s,
            load_settings(s).esa_prefill,
            [[i for i, _p, _d in p.queue] for p in plans],
            study.path,
        )
    if unjudged is not None:
        # Refused once the queues are stored: the judge can then score their controls.
        raise UserError(unjudged)
    out.mkdir(parents=True, exist_ok=True)
    keys: dict[str, _Built] = {}
    with files_in_place(out) as staging:
        for plan in plans:
            keys[plan.marker.kit_id] = _build_kit(study.path, staging / plan.file, plan)
    _record_placed(study, out, plans, top_up, keys)
    return [
        MadeKit(plan.rater, out / plan.file, plan.marker.kit_id, len(plan.queue), top_up)
        for plan in plans
    ]


def _check_lead(study: Study) -> None:
    """Kits are made from the lead's writable study, never from a kit."""
    if study.read_only:
        raise UserError(
            f"{study.path}: read-only; kits are recorded in the study, so it must be writable."
        )
    with study.session() as s:
        marker = read_marker(s)
    if marker is not None:
        raise UserError(
            f"{study.path}: a rater's kit (made for {marker.rater}), not the lead's study; "
            "make kits from the study it was made from"
        )


def _record_placed(
    study: Study,
    out: Path,
    plans: Sequence[KitPlan],
    top_up: bool,
    keys: dict[str, _Built],
) -> None:
    """Record the kits now in place; when the record cannot be written, the kits go
    (a kit the study has no record of could never be collected)."""
    try:
        with study.session(write=True) as s:
            _record(s, plans, top_up, keys)
    except BaseException:
        for plan in plans:
            (out / plan.file).unlink(missing_ok=True)
        raise


def _existing(path: Path) -> tuple[int, KitMarker | None]:
    """The rating rows and the kit marker of a file already at a kit's name (none of
    either for a file SQLite cannot read). Read as immutable: nothing is left beside it."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
        try:
            ratings = int(conn.execute("SELECT COUNT(*) FROM rating").fetchone()[0])
            row = conn.execute(
                "SELECT value FROM study_setting WHERE key = ?", (MARKER_KEY,)
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return 0, None
    try:
        marker = KitMarker.from_json(json.loads(row[0])) if row and row[0] else None
    except (TypeError, ValueError):
        marker = None
    return ratings, marker


def _check_targets(
    out: Path,
    plans: Sequence[KitPlan],
    study_id: str,
    records: dict[str, KitRecord],
    replace: bool,
) -> None:
    """Refuse before anything is written: a file holding ratings at a new kit's name
    (never replaced), other files there unless `replace`."""
    in_way = []
    for plan in plans:
        path = out / plan.file
        if not path.exists():
            continue
        log = path.with_name(path.name + "-wal")
        if log.exists() and log.stat().st_size > 0:
            raise UserError(
                f"{path}: open in MeaningBench, or not closed cleanly (its -wal file is beside "
                "it), so it may hold ratings: it is never replaced; nothing was written. Close "
                "it, or choose another folder"
            )
        ratings, marker = _existing(path)
        if ratings:
            raise UserError(
                f"{path}: holds {counted(ratings, 'rating')}; a kit with ratings in it is never "
                f"replaced and nothing was written. Collect it and move it out of {out}, or "
                "choose another folder"
            )
        if marker is not None and marker.study_id == study_id and marker.kit_id not in records:
            continue  # written by a `kit` stopped before its record: never a kit to send
        in_way.append(path)
    if in_way and not replace:
        raise KitsInTheWay(out, in_way)


def _no_top_up(s: Session, raters: Sequence[str]) -> str:
    short = len(short_items(s))
    if not short:
        return "No item is short of its ratings: no top-up kit is needed."
    return (
        f"{counted(short, 'item')} {'is' if short == 1 else 'are'} short of their ratings, but "
        f"{', '.join(raters) or 'no rater'} rated or already holds each of them: choose "
        "other raters."
    )


def _plan(
    annotator: Annotator,
    queue: list[tuple[int, float, bool]],
    study_id: str,
    records: dict[str, KitRecord],
    round_: int,
) -> KitPlan:
    """A new kit (new kit id) of `queue` for `annotator`: NAME.mbkit for the queue,
    NAME-top-up-N.mbkit for the rater's N-th top-up."""
    marker = KitMarker(study_id=study_id, kit_id=uuid.uuid4().hex, rater=annotator.name)
    tag = f"-top-up-{round_}" if round_ else ""
    practised = any(r.rater == annotator.name and r.returns for r in records.values())
    return KitPlan(
        annotator.name,
        annotator.id,
        queue,
        marker,
        f"{annotator.name}{tag}{KIT_SUFFIX}",
        round_,
        practised,
    )


def _next_top_up(records: dict[str, KitRecord], rater: str) -> int:
    """The number of the rater's next top-up round."""
    return 1 + len({r.round_key() for r in records.values() if r.rater == rater and r.top_up})


def _queue_plans(
    s: Session, raters: Sequence[str], study_id: str, records: dict[str, KitRecord]
) -> list[KitPlan]:
    plans = []
    for name in raters:
        annotator = get_or_create_annotator(s, name)
        if annotator.kind != "named":
            raise UserError(f"{name!r} is an imported {annotator.kind} rating source, not a rater.")
        ensure_queue(s, annotator)
        rows = s.execute(
            select(QueueEntry.item_id, QueueEntry.position, QueueEntry.done)
            .where(QueueEntry.annotator_id == annotator.id)
            .order_by(QueueEntry.position)
        ).all()
        queue = [(int(i), float(p), bool(d)) for i, p, d in rows]
        plans.append(_plan(annotator, queue, study_id, records, 0))
    return plans


def _short_in_order(s: Session, choice: TopUpChoice) -> list[ItemCoverage]:
    """The short items in the order a top-up hands them out: by id, or adaptively."""
    short = short_items(s)
    if choice.adaptive is None or not short:
        return short
    place = {item_id: k for k, item_id in enumerate(adaptive_item_order(s, choice))}
    return sorted(short, key=lambda c: (place.get(c.item_id, len(place)), c.item_id))


def _top_up_plans(
    s: Session,
    raters: Sequence[str],
    study_id: str,
    records: dict[str, KitRecord],
    choice: TopUpChoice,
) -> list[KitPlan]:
    """The short items shared among `raters`: each item to as many raters as it lacks,
    the least loaded first, never to a rater who rated it or holds it in their queue;
    `choice.items` of them at most, in `choice`'s order."""
    annotators = [get_or_create_annotator(s, name) for name in raters]
    queued = {
        (int(a), int(i)) for a, i in s.execute(select(QueueEntry.annotator_id, QueueEntry.item_id))
    }
    k = required_k(s)
    load: dict[int, list[int]] = {a.id: [] for a in annotators}
    handed = 0
    for item in _short_in_order(s, choice):
        if choice.items is not None and handed >= choice.items:
            break
        free = [
            a
            for a in annotators
            if a.name not in item.raters and (a.id, item.item_id) not in queued
        ]
        free.sort(key=lambda a: (len(load[a.id]), a.name))
        for a in free[: k - item.ratings]:
            load[a.id].append(item.item_id)
        handed += bool(free)
    plans = []
    for a in annotators:
        if not load[a.id]:
            continue
        start = s.scalar(
            select(func.max(QueueEntry.position)).where(QueueEntry.annotator_id == a.id)
        )
        base = 0.0 if start is None else float(start) + 1.0
        queue = [(item_id, base + n, False) for n, item_id in enumerate(load[a.id])]
        plans.append(_plan(a, queue, study_id, records, _next_top_up(records, a.name)))
    return plans


def kit_item_ids(s: Session, queue: Sequence[tuple[int, float, bool]]) -> set[int]:
    """The items a kit holds: its queue and the originals its controls were made from."""
    ids = {i for i, _p, _d in queue}
    parents = s.scalars(select(Item.parent_id).where(Item.id.in_(ids), Item.parent_id.is_not(None)))
    return ids | {int(p) for p in parents if p is not None}


def _record(s: Session, plans: Sequence[KitPlan], top_up: bool, keys: dict[str, _Built]) -> None:
    """The kits in the lead's study (and a top-up's items in its raters' queues)."""
    secret = ensure_secret(s)
    records = kit_records(s)
    made_at = utcnow().isoformat(timespec="seconds")
    for plan in plans:
        key, practice = keys[plan.marker.kit_id]
        identities = blind_identities(s, key)
        records[plan.marker.kit_id] = KitRecord(
            kit_id=plan.marker.kit_id,
            rater=plan.rater,
            file=plan.file,
            made_at=made_at,
            items=len(plan.queue),
            signature=signature(secret, plan.marker, identities),
            top_up=top_up,
            round=plan.round,
            log_key=plan.log_key,
            log_practice=True,
            blind=key,
            practice=practice,
        )
        if top_up:
            s.add_all(
                QueueEntry(annotator_id=plan.annotator_id, item_id=i, position=p, skips=0, done=d)
                for i, p, d in plan.queue
            )
    store_records(s, records)


# What the lead's study keeps of a kit it built: its blind key and the practice it holds.
_Built = tuple[BlindKey, dict[str, Any]]


def _build_kit(lead: Path, dest: Path, plan: KitPlan) -> _Built:
    """Write the blind kit of `plan` at `dest`; returns what the lead's study keeps of it:
    the blind key, and the practice items and pass mark as written into the kit."""
    copy_study(lead, dest)
    conn = sqlite3.connect(str(dest))
    try:
        conn.execute("PRAGMA foreign_keys=OFF")
        # Deleted rows are overwritten, not only unlinked (some SQLite builds default to off).
        conn.execute("PRAGMA secure_delete=ON")
        with conn:
            _strip(conn, plan)
            show_systems = _kit_settings(conn, plan)
            key = make_blind(conn, plan.marker.kit_id, show_systems=show_systems)
            blind_judge_scores(conn)
            practice = practice_in(lambda sql: conn.execute(sql).fetchall())
        start_log_in(dest, plan.log_key)
        conn.execute("VACUUM")  # no page of what was deleted stays in the file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return key, practice


def _empty(conn: sqlite3.Connection) -> None:
    """Empty the tables that hold nothing of a rater's, but for the judge's scores that
    pre-fill the ESA screen on the kit's items: the rater's screen reads its proposals there."""
    row = conn.execute(
        "SELECT json_extract(value, '$.esa_prefill.metric'), "
        "json_extract(value, '$.esa_prefill.config_hash') FROM study_setting WHERE key = ?",
        (SETTINGS_KEY,),
    ).fetchone()
    prefill = tuple(row) if row is not None and row[0] is not None else None
    for table in EMPTIED:
        if prefill is None or table not in ("score", "metric_run"):
            conn.execute(f"DELETE FROM {table}")
    if prefill is not None:
        conn.execute("DELETE FROM metric_run WHERE NOT (metric = ? AND config_hash = ?)", prefill)
        conn.execute(
            "DELETE FROM score WHERE run_id NOT IN (SELECT id FROM metric_run) "
            "OR item_id NOT IN (SELECT id FROM keep_item)"
        )


def _strip(conn: sqlite3.Connection, plan: KitPlan) -> None:
    """Delete from the copy everything that is not this rater's queue."""
    a = plan.annotator_id
    conn.execute(
        "CREATE TEMP TABLE keep_queue (item_id INTEGER PRIMARY KEY, position REAL, done INTEGER)"
    )
    conn.executemany("INSERT INTO keep_queue VALUES (?, ?, ?)", plan.queue)
    conn.execute(
        "CREATE TEMP TABLE keep_item AS SELECT item_id AS id FROM keep_queue UNION "
        "SELECT parent_id FROM item WHERE id IN (SELECT item_id FROM keep_queue) "
        "AND parent_id IS NOT NULL"
    )
    known = set(Base.metadata.tables) | {"alembic_version"}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        if table not in known and not str(table).startswith("sqlite_"):
            conn.execute(f'DROP TABLE "{table}"')  # a job's scratch table: scores again
    _empty(conn)
    keep = "(SELECT id FROM keep_item)"
    conn.execute(f"DELETE FROM rating WHERE annotator_id != ? OR item_id NOT IN {keep}", (a,))
    conn.execute(
        "UPDATE rating SET supersedes_id = NULL WHERE supersedes_id NOT IN (SELECT id FROM rating)"
    )
    conn.execute("DELETE FROM rating_span WHERE rating_id NOT IN (SELECT id FROM rating)")
    conn.execute("DELETE FROM span_proposal WHERE rating_id NOT IN (SELECT id FROM rating)")
    conn.execute(
        f"DELETE FROM item_note WHERE annotator_id IS NULL OR annotator_id != ? OR item_id NOT IN {keep}",
        (a,),
    )
    conn.execute("DELETE FROM practice_answer WHERE annotator_id != ?", (a,))
    conn.execute("DELETE FROM queue_entry")
    conn.execute(
        "INSERT INTO queue_entry (annotator_id, item_id, position, skips, done) "
        "SELECT ?, item_id, position, 0, done FROM keep_queue",
        (a,),
    )
    conn.execute(f"DELETE FROM item WHERE id NOT IN {keep}")
    conn.execute("DELETE FROM dataset WHERE id NOT IN (SELECT dataset_id FROM item)")
    conn.execute("DELETE FROM annotator WHERE id != ?", (a,))
    _only_what_the_rater_needs(conn, plan)


def _only_what_the_rater_needs(conn: sqlite3.Connection, plan: KitPlan) -> None:
    """No item attribute (an unmapped column may be a gold label), no path or import
    record of the lead's files, and no practice for a rater who has done it. (A control's
    variant and its original's system, kept here, go when the kit is made blind, which
    shows that system on the control when the protocol shows systems.)"""
    conn.execute(
        "UPDATE item SET meta = CASE WHEN json_extract(meta, '$.control') IS NULL THEN '{}' "
        "ELSE json_object('control', json_extract(meta, '$.control'), "
        "'parent_system', json_extract(meta, '$.parent_system')) END"
    )
    conn.execute("UPDATE dataset SET source_file = NULL, meta = '{}'")
    if plan.practised:
        conn.execute("DELETE FROM practice_answer")
        conn.execute("DELETE FROM practice_item")


def _kit_settings(conn: sqlite3.Connection, plan: KitPlan) -> bool:
    """The kit's settings: the protocol and guidelines, none of the lead's quality control
    (its mix of controls, thresholds, seed, selection); returns whether systems are shown."""
    marks = ", ".join("?" for _ in KIT_SETTINGS)
    conn.execute(f"DELETE FROM study_setting WHERE key NOT IN ({marks})", KIT_SETTINGS)
    row = conn.execute("SELECT value FROM study_setting WHERE key = ?", (SETTINGS_KEY,)).fetchone()
    settings = AnnotationSettings.from_json(json.loads(row[0]) if row and row[0] else None)
    # The lead's study chose who rates what; in the kit the rater rates all it holds.
    settings.overlap_k = None
    blank = AnnotationSettings()
    settings.qc_enabled = False
    settings.qc = QCMix(**{kind: 0 for kind in QC_KINDS})
    settings.rater_thresholds = {}
    settings.seed = kit_rng(plan.marker.kit_id).randrange(1 << 31)
    settings.selection, settings.selection_metrics = blank.selection, blank.selection_metrics
    settings.datasets = None
    if plan.practised:  # the kit holds no practice: no pass mark to reach
        settings.practice_pass_items = None
    show_systems = settings.show_systems
    upsert = "INSERT OR REPLACE INTO study_setting (key, value) VALUES (?, ?)"
    conn.execute(upsert, (SETTINGS_KEY, json.dumps(settings.to_json())))
    conn.execute(upsert, (MARKER_KEY, json.dumps(plan.marker.to_json())))
    conn.execute("UPDATE annotator SET meta = '{}'")  # its slot and the lead's queue seed
    return show_systems
