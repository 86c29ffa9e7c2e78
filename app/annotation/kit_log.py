"""A kit's log of its rater's work: an append-only chain of events, each sealed with a key
that changes after every event, which makes the kit's ratings tamper-evident.

Every write the rater makes in a kit (a rating, a revision, an undo, a skip, a flag, a
practice answer) adds an event to the kit's study settings (`kit_log/00000001`, ...), in
the same transaction as the write. An event holds what the write left on its item: every
rating row of it (value, times, state, history link, flag and comment), their error spans
and pre-fill records, and the item's notes; a practice answer's event holds every answer
to its practice item (id, rater, value, verdict and time: the ids and times order the
attempts), the item named by its text, as collect matches it. Its seal is an HMAC-SHA256 over the event and the seal before it, under
the kit's current key; then the key moves on (the SHA-256 of the key before) and only the
new key stays in the kit (`kit_log`, written over the old one with SQLite's secure delete).

The lead's study keeps the kit's first key (its record's `log_key`, never in any kit).
Collecting a kit replays the chain from that key: every seal must match, the chain must end
at the key the kit holds (a log cut short leaves a key that no longer fits), and the rows
the kit holds for each item, and its practice answers to each practice item, must be
exactly what its latest event says. An edit made with a generic tool (sqlite3, a database
browser) to a rating, a time, a span, a note or a practice answer, a row added or deleted
(a failed attempt's answer among them), or an event edited or removed, therefore fails the
check. (Kits made before practice answers had events: the lead's record says so, and
their practice answers are not checked; `check_log(practice=False)`.)

What it cannot do: the key the kit holds at any moment can seal further events, so whoever
holds the kit file and knows this scheme (it is open: this file) can add events after the
last real one, as the rater could by rating again in the app, and such an event may hold
whatever the kit holds by then (the check compares each item's latest event). Events sealed before the
file was copied cannot be rewritten from it, since the keys that sealed them are gone:
unless an earlier copy of the file (a backup, a `-wal` left beside it) still holds one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from meaningbench.db.engine import make_engine
from meaningbench.db.models import StudySetting, utcnow

# The log's head (its event count, current key and last seal) and its events' keys.
HEAD_KEY = "kit_log"
EVENT_PREFIX = "kit_log/"

# What a write did (the kinds of event); "made": the rows a kit held when it was made.
EVENT_KINDS = ("made", "rate", "undo", "skip", "flag", "practice")

_NEXT_KEY = b"meaningbench kit log: next key\x00"

_RATINGS = """
    SELECT r.id, a.name, d.name, r.value, r.start_value, r.shown_at, r.submitted_at,
           r.duration_ms, r.flagged, r.comment, r.state, r.supersedes_id, r.origin,
           r.n_raters, r.display
    FROM rating r
    LEFT JOIN annotator a ON a.id = r.annotator_id
    LEFT JOIN dimension d ON d.id = r.dimension_id
    WHERE r.item_id = :item ORDER BY r.id"""
_SPANS = """
    SELECT s.id, s.rating_id, s.side, s.start, s."end", s.severity, s.text
    FROM rating_span s JOIN rating r ON r.id = s.rating_id
    WHERE r.item_id = :item ORDER BY s.id"""
_PROPOSALS = """
    SELECT p.id, p.rating_id, p.span_id, p.side, p.start, p."end", p.severity, p.text,
           p.model, p.config_hash, p.template, p.fate
    FROM span_proposal p JOIN rating r ON r.id = p.rating_id
    WHERE r.item_id = :item ORDER BY p.id"""
_NOTES = """
    SELECT n.id, a.name, n.flagged, n.comment, n.created_at
    FROM item_note n LEFT JOIN annotator a ON a.id = n.annotator_id
    WHERE n.item_id = :item ORDER BY n.id"""
_IDENTITY = """
    SELECT d.name, i.pair_key, i.kind FROM item i LEFT JOIN dataset d ON d.id = i.dataset_id
    WHERE i.id = :item"""
# The items a kit holds rows of that a collect could take in.
_ITEMS_WITH_ROWS = "SELECT item_id FROM rating UNION SELECT item_id FROM item_note"
# Practice answers by their item's text (`IS`: an answer whose item is gone has none).
_PRACTICE_ANSWERS = """
    SELECT p.id, a.name, p.value, p.passed, p.submitted_at
    FROM practice_answer p
    LEFT JOIN practice_item i ON i.id = p.practice_item_id
    LEFT JOIN annotator a ON a.id = p.annotator_id
    WHERE i.source IS :source AND i.output IS :output ORDER BY p.id"""
_PRACTICE_ANSWERED = """
    SELECT DISTINCT i.source, i.output FROM practice_answer p
    LEFT JOIN practice_item i ON i.id = p.practice_item_id ORDER BY 1, 2"""
_PRACTICE_FIELDS = ("id", "rater", "value", "verdict", "time")


class LogMismatch(Exception):
    """The kit's log does not vouch for its ratings; the message says how, in a few words."""


def new_log_key() -> str:
    return secrets.token_hex(32)


def _next_key(key: str) -> str:
    return hashlib.sha256(_NEXT_KEY + bytes.fromhex(key)).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _seal(key: str, before: str, number: int, kind: str, at: str, rows: Any) -> str:
    body = _canonical([before, number, kind, at, rows])
    return hmac.new(bytes.fromhex(key), body.encode(), hashlib.sha256).hexdigest()


def _plain(value: Any) -> Any:
    """A stored value as JSON keeps it (bytes, which no writer of ours stores, as hex)."""
    return f"blob:{value.hex()}" if isinstance(value, bytes) else value


def _rows(session: Session, sql: str, item_id: int) -> list[list[Any]]:
    return [[_plain(v) for v in row] for row in session.execute(text(sql), {"item": item_id})]


def item_rows(session: Session, item_id: int) -> dict[str, Any]:
    """What a collect may take of an item, as stored: its identity (not its id, which a
    file edit could point elsewhere), ratings, spans, pre-fill records and notes."""
    identity = session.execute(text(_IDENTITY), {"item": item_id}).first()
    return {
        "item": [_plain(v) for v in identity] if identity is not None else None,
        "ratings": _rows(session, _RATINGS, item_id),
        "spans": _rows(session, _SPANS, item_id),
        "proposals": _rows(session, _PROPOSALS, item_id),
        "notes": _rows(session, _NOTES, item_id),
    }


def practice_rows(session: Session, source: Any, output: Any) -> dict[str, Any]:
    """Every practice answer the kit holds to the practice item of this text, as stored."""
    answers = session.execute(text(_PRACTICE_ANSWERS), {"source": source, "output": output})
    return {
        "practice": [_plain(source), _plain(output)],
        "answers": [[_plain(v) for v in row] for row in answers],
    }


def _head(session: Session) -> dict[str, Any] | None:
    row = session.get(StudySetting, HEAD_KEY)
    return row.value if row is not None and isinstance(row.value, dict) else None


def start_log(session: Session, key: str) -> None:
    """Begin a new kit's log under its first `key` (the lead's record keeps it), with an
    event for each item the kit already holds rows of (the rater's earlier ratings)."""
    session.add(StudySetting(key=HEAD_KEY, value={"events": 0, "key": key, "seal": ""}))
    session.flush()
    for (item_id,) in session.execute(text(_ITEMS_WITH_ROWS + " ORDER BY 1")).all():
        record_event(session, "made", int(item_id))
    # The rater's earlier practice attempts, which the kit carries from the lead's study.
    for source, output in session.execute(text(_PRACTICE_ANSWERED)).all():
        _append(session, "made", partial(practice_rows, session, source, output))


def start_log_in(kit: Path, key: str) -> None:
    """`start_log` in the kit file at `kit`, made a moment ago and not open elsewhere."""
    engine = make_engine(kit)
    try:
        with Session(engine) as session, session.begin():
            start_log(session, key)
    finally:
        engine.dispose()


def record_event(session: Session, kind: str, item_id: int) -> None:
    """Add to the kit's log what the write in this transaction left on `item_id`; nothing
    in a study that keeps no log (the lead's, a kit made before kits kept one)."""
    _append(session, kind, lambda: item_rows(session, item_id))


def record_practice(session: Session, practice_item_id: int) -> None:
    """Add to the kit's log the practice answers to `practice_item_id` once this
    transaction's answer is among them; nothing in a study that keeps no log."""

    def rows() -> dict[str, Any]:
        identity = session.execute(
            text("SELECT source, output FROM practice_item WHERE id = :id"),
            {"id": practice_item_id},
        ).one()
        return practice_rows(session, *identity)

    _append(session, "practice", rows)


def _append(session: Session, kind: str, rows_now: Callable[[], dict[str, Any]]) -> None:
    row = session.get(StudySetting, HEAD_KEY)
    if row is None or not isinstance(row.value, dict):
        return
    # The key about to be replaced must not stay readable in the file's free space.
    session.execute(text("PRAGMA secure_delete=ON"))
    session.flush()  # the write's rows, so that the event holds them
    head = row.value
    number = int(head["events"]) + 1
    at = utcnow().isoformat()
    rows = rows_now()
    seal = _seal(head["key"], head["seal"], number, kind, at, rows)
    event = {"kind": kind, "at": at, "rows": rows, "seal": seal}
    session.add(StudySetting(key=f"{EVENT_PREFIX}{number:08d}", value=event))
    row.value = {"events": number, "key": _next_key(head["key"]), "seal": seal}


def has_log(session: Session) -> bool:
    return _head(session) is not None


def log_events(session: Session) -> int:
    """How many events the kit's log holds: a later copy of a kit holds more than an
    earlier one (its log goes on from it), so this orders copies of one kit."""
    head = _head(session)
    return int(head["events"]) if head is not None else 0


def check_log(session: Session, first_key: str, *, practice: bool = True) -> None:
    """Raise `LogMismatch` unless the kit's log, replayed from `first_key`, is whole and
    the kit's rows are exactly those its latest event of each item holds; with `practice`,
    its practice answers too (False: a kit made before they had events)."""
    head = _head(session)
    if head is None:
        raise LogMismatch("it holds no log of its ratings")
    latest, practised = _replay(session, first_key, head)
    now = {}
    for (item_id,) in session.execute(text(_ITEMS_WITH_ROWS)).all():
        rows = item_rows(session, int(item_id))
        now[_canonical(rows["item"])] = rows
    for item in sorted(set(now) | set(latest)):
        if _held(now.get(item)) != _held(latest.get(item)):
            raise LogMismatch(f"the ratings of item {_name(item)} are not those its log holds")
    if practice:
        _check_practice(session, practised)


def _check_practice(session: Session, logged: dict[str, list[Any]]) -> None:
    """The kit's practice answers to each practice item against its latest event."""
    held = {}
    for source, output in session.execute(text(_PRACTICE_ANSWERED)).all():
        rows = practice_rows(session, source, output)
        held[_canonical(rows["practice"])] = rows["answers"]
    for identity in sorted(set(held) | set(logged)):
        was, now = logged.get(identity, []), held.get(identity, [])
        if _canonical(was) != _canonical(now):
            output = json.loads(identity)[1]
            raise LogMismatch(
                f"the practice answers to {_short(output)} are not those its log holds: "
                + _answers_differ(was, now)
            )


def _short(words: Any) -> str:
    shown = str(words)
    return repr(shown if len(shown) <= 40 else shown[:39] + "…")


def _answers_differ(was: list[Any], now: list[Any]) -> str:
    """What differs between the answers the log holds and those the kit holds, by id."""
    before = {row[0]: row for row in was}
    after = {row[0]: row for row in now}
    parts = [f"answer {i} deleted" for i in sorted(set(before) - set(after))]
    parts += [f"answer {i} added" for i in sorted(set(after) - set(before))]
    for i in sorted(set(before) & set(after)):
        changes = [
            f"{field} {a!r} in the log, {b!r} in the kit"
            for field, a, b in zip(_PRACTICE_FIELDS, before[i], after[i], strict=False)
            if a != b
        ]
        if changes:
            parts.append(f"answer {i}: {', '.join(changes)}")
    return "; ".join(parts) or "their order differs"


def _held(rows: dict[str, Any] | None) -> str | None:
    """An item's rows as compared; None for none at all (an item only skipped)."""
    if rows is None or not any(rows.get(k) for k in ("ratings", "spans", "proposals", "notes")):
        return None
    return _canonical(rows)


def _name(item: str) -> str:
    identity = json.loads(item)
    return "/".join(str(p) for p in identity[:2]) if isinstance(identity, list) else item


_Latest = tuple[dict[str, dict[str, Any]], dict[str, list[Any]]]


def _replay(session: Session, key: str, head: dict[str, Any]) -> _Latest:
    """Each item's rows, and each practice item's answers, as its latest event holds them,
    once every seal was checked."""
    events = session.execute(
        text("SELECT key, value FROM study_setting WHERE key LIKE :p ORDER BY key"),
        {"p": f"{EVENT_PREFIX}%"},
    ).all()
    if len(events) != head.get("events"):
        raise LogMismatch("events were added to or removed from its log")
    latest: dict[str, dict[str, Any]] = {}
    practised: dict[str, list[Any]] = {}
    seal = ""
    for number, (name, raw) in enumerate(events, 1):
        event = json.loads(raw) if isinstance(raw, str) else raw
        if name != f"{EVENT_PREFIX}{number:08d}" or not _event_shape(event):
            raise LogMismatch(f"event {number} of its log is damaged")
        want = _seal(key, seal, number, event["kind"], event["at"], event["rows"])
        if not hmac.compare_digest(want, str(event["seal"])):
            raise LogMismatch(f"event {number} of its log was changed")
        rows = event["rows"]
        if "practice" in rows:
            practised[_canonical(rows["practice"])] = rows["answers"]
        else:
            latest[_canonical(rows["item"])] = rows
        seal, key = want, _next_key(key)
    if head.get("key") != key or head.get("seal") != seal:
        raise LogMismatch("its log was cut short")
    return latest, practised


def _event_shape(event: Any) -> bool:
    return (
        isinstance(event, dict)
        and event.get("kind") in EVENT_KINDS
        and isinstance(event.get("at"), str)
        and isinstance(event.get("rows"), dict)
        and (
            "item" in event["rows"]
            or (
                isinstance(event["rows"].get("practice"), list)
                and len(event["rows"]["practice"]) == 2
                and isinstance(event["rows"].get("answers"), list)
            )
        )
    )
