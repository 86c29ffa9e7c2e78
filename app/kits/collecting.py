"""Collecting returned kits: each checked against the lead's record, then merged whole.

A kit is refused, with its file named and nothing of it merged, when it is no kit, a kit
of another study, a kit this study has no record of, a damaged or partial file, or a
tampered one: its items, ids or raters no longer those it was made with (see
`meaningbench.kits.record`), nor its practice items and pass mark (see
`meaningbench.kits.practice_made`), its ratings or practice answers no longer those its
sealed log holds (see `meaningbench.annotation.kit_log`), or a value that the lead's own
definitions refuse (a rating outside its dimension's scale, text where a number belongs, a
row pointing at an item, rater or dimension that is not there). The others are still
collected.

A kit is only read, as an immutable file: nothing is written beside it, so the folder of
returned kits stays byte for byte as it was. Each accepted kit goes through the merge
(`meaningbench.annotation.merge`) in one transaction, so it comes in whole or not at all,
and only its ratings, spans, notes and their times come in; a kit collected again adds
nothing, as the merge recognises what is already here.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from meaningbench.analysis.rater_checks import RaterCheck, RaterThresholds, checks_from_frame
from meaningbench.annotation.kit_log import LogMismatch, check_log, log_events
from meaningbench.annotation.merge import MergeReport, merge_ratings, open_copy
from meaningbench.annotation.settings import load_settings
from meaningbench.annotation.spans import Span, check_span
from meaningbench.core.wording import counted
from meaningbench.db.errors import StudyFileError
from meaningbench.db.faults import describe_fault
from meaningbench.db.frames import ratings_frame
from meaningbench.db.models import RATING_STATES, Annotator, Dimension, utcnow
from meaningbench.db.study import Study
from meaningbench.db.study_id import read_study_id
from meaningbench.errors import UserError
from meaningbench.kits.blind import BlindKey, check_key, sealed, unblind
from meaningbench.kits.practice_made import practice_differs, practice_in
from meaningbench.kits.practice_return import KitAnswer, add_answers, missing_items, read_answers
from meaningbench.kits.record import (
    KIT_SUFFIX,
    KitMarker,
    KitRecord,
    item_identities,
    kit_records,
    read_marker,
    read_secret,
    signature_matches,
    store_records,
)

NOTHING_MERGED = "nothing was merged"


@dataclass
class KitReturn:
    """One kit collected: whose, what the merge wrote, and the kit's controls."""

    path: Path
    rater: str
    kit_id: str
    merge: MergeReport
    # The rater's checks on this kit's ratings alone (controls passed); None: no ratings.
    controls: RaterCheck | None
    # Made before kits kept a sealed log: its ratings could not be checked for edits.
    unchecked: bool = False
    # Made before kits were blind: its rater could tell its controls from its other items.
    not_blind: bool = False
    # The rater's practice answers brought in (`meaningbench.kits.practice_return`).
    practice_added: int = 0
    # Holds practice answers, but was made before kits sealed them: not checked for edits.
    practice_unchecked: bool = False

    @property
    def new_ratings(self) -> int:
        """Ratings written that are now in force (not a conflict, not an earlier value)."""
        m = self.merge
        return m.ratings_added - len(m.conflicts) - m.history_added

    @property
    def rows_written(self) -> int:
        return self.merge.ratings_added

    def summary(self) -> str:
        """What the collect wrote, in rows: every count is rows added to the study."""
        m = self.merge
        parts = [counted(self.new_ratings, "new rating")]
        if m.conflicts:
            parts.append(f"{counted(len(m.conflicts), 'conflict')} kept as history")
        if m.history_added:
            parts.append(f"{counted(m.history_added, 'earlier value')} kept as history")
        if m.states_followed:
            parts.append(f"{counted(m.states_followed, 'rating')} since revised or undone")
        if m.duplicates:
            parts.append(f"{m.duplicates:,} already here")
        if m.notes_added:
            parts.append(counted(m.notes_added, "note"))
        return ", ".join(parts)


@dataclass(frozen=True)
class CollectReport:
    collected: list[KitReturn] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def new_ratings(self) -> int:
        return sum(k.new_ratings for k in self.collected)

    @property
    def conflicts(self) -> int:
        return sum(len(k.merge.conflicts) for k in self.collected)


def returned_kits(folder: Path) -> list[Path]:
    """The kit files of a folder, by name (hidden partial files left out)."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder")
    return sorted(
        p for p in folder.glob(f"*{KIT_SUFFIX}") if not p.name.startswith(".") and p.is_file()
    )


def collect_kits(
    study: Study, folder: Path, *, on_kit: Callable[[Path], None] | None = None
) -> CollectReport:
    """Merge every kit in `folder` into `study`; a refused kit is reported, not raised. A
    write of the lead's study that fails (a full disk) stops the collect with a message
    naming the kits collected before it, the one it stopped at and those not read."""
    if study.read_only:
        raise UserError(f"{study.path}: read-only; collected ratings could not be stored.")
    study_id = read_study_id(study)
    report = CollectReport()
    kits = returned_kits(folder)
    for number, path in enumerate(kits):
        if on_kit is not None:
            on_kit(path)
        try:
            report.collected.append(_collect_one(study, study_id, path))
        except UserError as exc:
            report.refused.append((path, str(exc)))
        except Exception as exc:
            fault = describe_fault(exc, study.path)
            if fault is None:
                raise
            raise StudyFileError(_stopped(fault, report, path, kits[number + 1 :])) from exc
    return report


def _collect_one(study: Study, study_id: str | None, path: Path) -> KitReturn:
    """The kit at `path`, checked and merged from a private copy of it beside the lead's
    study (on its disk: a full one stops the collect, as a full disk does during a merge),
    so the file checked is the file merged, whatever happens to the one in the folder."""
    with TemporaryDirectory(prefix=".collecting-", dir=study.path.parent) as private:
        checked = check_kit(study, study_id, path, private=Path(private))
        if checked.key is not None and checked.read is not None:
            with study.session() as s:
                unblind(checked.read, s, checked.key)
        return _merge_kit(study, path, checked)


def _stopped(fault: StudyFileError, report: CollectReport, at: Path, unread: list[Path]) -> str:
    """A fault of the lead's study in the middle of a collect: what is what."""
    done = ", ".join(k.path.name for k in report.collected) or "none"
    message = (
        f"{str(fault).split('; ')[0]}: the collect stopped at {at.name}, of which "
        f"{NOTHING_MERGED}. Collected before it and kept: {done}."
    )
    if unread:
        message += f" Not read yet: {', '.join(p.name for p in unread)}."
    return message + " Free some disk space and collect again (nothing is added twice)."


@dataclass(frozen=True)
class _Checked:
    marker: KitMarker
    unchecked: bool
    # The events of the kit's log (None: no log, a kit made before kits kept one), and
    # those of the latest copy of it collected before (see `KitRecord.log_events`).
    events: int | None = None
    seen: int = 0
    # The file read: the kit's private copy (see `collect_kits`), or the kit itself.
    read: Path | None = None
    # A blind kit's key (`KitRecord.blind`); None: a kit made before kits were blind.
    key: BlindKey | None = None
    # The rater's practice answers, checked (`meaningbench.kits.practice_return`).
    practice: tuple[KitAnswer, ...] = ()
    # Its practice answers could not be checked against a log (see `KitReturn`).
    practice_unchecked: bool = False

    @property
    def latest(self) -> bool:
        """No older than any copy of the kit collected before: the rater's latest word."""
        return self.events is not None and self.events >= self.seen


def _merge_kit(study: Study, path: Path, checked: _Checked) -> KitReturn:
    source = checked.read or path
    practice_added = 0

    def with_the_ratings(s: Session, merged: MergeReport) -> None:
        # The return record and the practice answers go in the ratings' transaction: a
        # fault between them would leave a kit merged but never recorded as returned.
        nonlocal practice_added
        # A kit that brought nothing new (not rated yet, or collected before) is no return.
        returned = bool(merged.ratings_added or merged.notes_added or merged.states_followed)
        if returned or (checked.events or 0) > checked.seen:
            _note_return(s, checked, returned)
        practice_added = add_answers(s, checked.marker.rater, list(checked.practice))

    try:
        # One chunk, no pause: the kit comes in whole in one transaction or not at all.
        merged = merge_ratings(
            study,
            source,
            chunk_items=1 << 30,
            chunk_gap_s=0,
            kit=True,
            follow_rater=checked.latest,
            finish=with_the_ratings,
        )
    except UserError as exc:
        raise UserError(str(exc).replace(str(source), str(path))) from exc
    merged.other = path
    marker = checked.marker
    controls = _kit_checks(study, source, marker)
    return KitReturn(
        path,
        marker.rater,
        marker.kit_id,
        merged,
        controls,
        checked.unchecked,
        not_blind=checked.key is None,
        practice_added=practice_added,
        practice_unchecked=checked.practice_unchecked,
    )


def check_kit(
    study: Study, study_id: str | None, path: Path, *, private: Path | None = None
) -> _Checked:
    """What a collect needs of a kit that is this study's and untouched; else a UserError
    naming the file (whatever is wrong with it: a damaged file is refused, not raised).
    `private`: a folder of this process's to copy the kit into and read it there."""
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise UserError(
            f"{path}: {wal.name} lies beside it (the kit is open in MeaningBench, or "
            "was copied with a file that may not be its own); close it and use Send back, "
            f"which writes the kit as one file, then collect again; {NOTHING_MERGED}"
        )
    read = path if private is None else _private_copy(path, private)
    try:
        return _read_and_check(study, study_id, path, read)
    except (sqlite3.Error, SQLAlchemyError, StudyFileError, ValueError, TypeError) as exc:
        why = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        raise UserError(f"{path}: damaged or cut short ({why}); {NOTHING_MERGED}") from exc
    except LogMismatch as exc:
        raise UserError(
            f"{path}: the kit was changed outside MeaningBench ({exc}); {NOTHING_MERGED}"
        ) from exc


def _private_copy(path: Path, folder: Path) -> Path:
    try:
        data = path.read_bytes()
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise UserError(f"{path}: could not be read ({why}); {NOTHING_MERGED}") from exc
    copy = folder / path.name
    copy.write_bytes(data)  # the lead's disk: a full one is no fault of the kit's
    return copy


def _read_and_check(study: Study, study_id: str | None, path: Path, read: Path) -> _Checked:
    try:
        src = open_copy(read, immutable=True)
    except UserError as exc:
        why = str(exc).removeprefix(f"{read}: ")
        raise UserError(f"{path}: damaged or cut short ({why}); {NOTHING_MERGED}") from exc
    try:
        damage = src.execute(text("PRAGMA quick_check")).scalars().all()
        if damage != ["ok"]:
            raise UserError(f"{path}: damaged ({damage[0]}); {NOTHING_MERGED}")
        marker = read_marker(src)
        if marker is None:
            raise UserError(f"{path}: not a rater kit (a study file without a kit marker)")
        if study_id is None or marker.study_id != study_id:
            raise UserError(f"{path}: a kit of another study; {NOTHING_MERGED}")
        with study.session() as s:
            record = kit_records(s).get(marker.kit_id)
            secret = read_secret(s)
            dimensions = {d.name: d for d in s.scalars(select(Dimension))}
            for d in dimensions.values():
                s.expunge(d)
        if record is None or secret is None:
            raise UserError(
                f"{path}: this study made no kit with this id (edited?); {NOTHING_MERGED}"
            )
        _check_contents(src, path, marker, record, secret, set(dimensions))
        _check_practice_made(src, path, record)
        if record.blind is not None:
            with study.session() as s:
                check_key(src, s, record.blind, path, NOTHING_MERGED)
        _check_values(src, path, marker.rater, dimensions)
        _check_spans(src, path)
        practice = tuple(_practice(study, src, path, marker.rater))
        # Practice answers in a kit made before its log held them: taken in, with a warning.
        unsealed = bool(practice) and not (record.log_key and record.log_practice)
        if record.log_key is None:
            return _Checked(marker, True, None, 0, read, record.blind, practice, unsealed)
        check_log(src, record.log_key, practice=record.log_practice)
        return _Checked(
            marker,
            False,
            log_events(src),
            record.log_events,
            read,
            record.blind,
            practice,
            unsealed,
        )
    finally:
        bind = src.get_bind()
        src.close()
        bind.dispose()  # type: ignore[union-attr]


def _check_contents(
    src: Session,
    path: Path,
    marker: KitMarker,
    record: KitRecord,
    secret: str,
    dimensions: set[str],
) -> None:
    tampered = f"{path}: the kit was changed since it was made"
    if record.rater != marker.rater:
        raise UserError(
            f"{tampered} (its rater is now {marker.rater!r}, not {record.rater!r}); "
            f"{NOTHING_MERGED}"
        )
    names = set(src.scalars(select(Annotator.name)))
    if names - {marker.rater}:
        others = ", ".join(sorted(names - {marker.rater}))
        raise UserError(f"{tampered} (it holds other raters: {others}); {NOTHING_MERGED}")
    identities = sealed(item_identities(src), record.blind)
    if not signature_matches(secret, marker, identities, record.signature):
        raise UserError(f"{tampered} (its items were added to or edited); {NOTHING_MERGED}")
    extra = set(src.scalars(select(Dimension.name))) - dimensions
    if extra:
        raise UserError(
            f"{tampered} (new dimensions: {', '.join(sorted(extra))}); {NOTHING_MERGED}"
        )


def _check_practice_made(src: Session, path: Path, record: KitRecord) -> None:
    """The kit's practice items and pass mark are those it was made with: a range widened,
    a pass mark lowered or attempts added would let its rater pass offline and rate."""
    if record.practice is None:
        return  # made before the lead's record kept them
    differs = practice_differs(record.practice, practice_in(lambda sql: src.execute(text(sql))))
    if differs is not None:
        raise UserError(
            f"{path}: the kit was changed since it was made ({differs}); {NOTHING_MERGED}"
        )


def _practice(study: Study, src: Session, path: Path, rater: str) -> list[KitAnswer]:
    answers = read_answers(src, path, rater, NOTHING_MERGED)
    missing = missing_items(study, answers)
    if missing:
        raise UserError(
            f"{path}: practice answers to items this study has no practice for "
            f"({', '.join(repr(m) for m in missing[:3])}); {NOTHING_MERGED}"
        )
    return answers


_KIT_RATINGS = """
    SELECT r.id, r.item_id, i.id, r.annotator_id, a.name, r.dimension_id, d.name,
           r.value, r.start_value, r.state, r.submitted_at, r.shown_at, r.duration_ms,
           r.supersedes_id, s.id
    FROM rating r
    LEFT JOIN item i ON i.id = r.item_id
    LEFT JOIN annotator a ON a.id = r.annotator_id
    LEFT JOIN dimension d ON d.id = r.dimension_id
    LEFT JOIN rating s ON s.id = r.supersedes_id
    ORDER BY r.id"""


def _check_values(src: Session, path: Path, rater: str, dimensions: dict[str, Dimension]) -> None:
    """Every rating of the kit against the lead's own definitions: its item, rater and
    dimension there, a number on the lead's scale of that dimension, a known state and
    readable times; the first that fails refuses the kit."""
    for row in src.execute(text(_KIT_RATINGS)).all():
        problem = _rating_problem(row, rater, dimensions)
        if problem is not None:
            raise UserError(f"{path}: rating {row[0]} {problem}; {NOTHING_MERGED}")


_KIT_SPANS = """
    SELECT s.rating_id, s.side, s.start, s."end", s.severity, s.text, i.source, i.output
    FROM rating_span s JOIN rating r ON r.id = s.rating_id JOIN item i ON i.id = r.item_id
    ORDER BY s.id"""


def _check_spans(src: Session, path: Path) -> None:
    """Every error span of the kit's ratings fits its item's text, as the screen made it."""
    for rating_id, side, start, end, severity, words, source, output in src.execute(
        text(_KIT_SPANS)
    ):
        if not (isinstance(start, int) and isinstance(end, int) and isinstance(words, str)):
            raise UserError(f"{path}: a span of rating {rating_id} is damaged; {NOTHING_MERGED}")
        span = Span(side=str(side), start=start, end=end, severity=str(severity), text=words)
        try:
            check_span(span, str(source), str(output), f"a span of rating {rating_id}")
        except UserError as exc:
            raise UserError(f"{path}: {str(exc).rstrip('.')}; {NOTHING_MERGED}") from exc


def _rating_problem(row: Any, rater: str, dimensions: dict[str, Dimension]) -> str | None:
    (_id, item_id, item, annotator_id, name, dimension_id, dim_name) = row[:7]
    value, start, state, submitted, shown, duration, supersedes, prior = row[7:]
    if item is None:
        return f"points at item {item_id}, which the kit does not hold"
    if name is None:
        return f"points at annotator {annotator_id}, which the kit does not hold"
    if name != rater:
        return f"points at annotator {annotator_id}, not at the kit's rater {rater!r}"
    dimension = dimensions.get(dim_name) if dim_name is not None else None
    if dimension is None:
        return f"points at dimension {dimension_id}, which this study does not have"
    for what, v in (("value", value), ("start value", start)):
        if v is None and what == "start value":
            continue
        wrong = _off_scale(v, dimension)
        if wrong is not None:
            return f"has {what} {v!r}: {wrong}"
    if state not in RATING_STATES:
        return f"has state {state!r}, not one of {', '.join(RATING_STATES)}"
    if not _is_time(submitted) or (shown is not None and not _is_time(shown)):
        return "has a time that is not a date and time"
    if duration is not None and (not isinstance(duration, int) or duration < 0):
        return f"has duration {duration!r}, not a number of milliseconds"
    if supersedes is not None and prior is None:
        return f"replaces rating {supersedes}, which the kit does not hold"
    return None


def _off_scale(value: Any, dimension: Dimension) -> str | None:
    """Why `value` is no rating on the lead's `dimension`; None when it is one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "not a number"
    low, high = dimension.min_value, dimension.max_value
    if not math.isfinite(value) or not low <= value <= high:
        return f"outside {dimension.name}'s scale {low:g}–{high:g}"
    if dimension.scale == "likert" and value != int(value):
        return f"not a whole number on {dimension.name}'s Likert scale"
    return None


def _is_time(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _note_return(s: Session, checked: _Checked, returned: bool) -> None:
    records = kit_records(s)
    record = records[checked.marker.kit_id]
    if returned:
        record.returns.append(utcnow().isoformat(timespec="seconds"))
    if checked.latest and checked.events is not None:
        record.log_events = max(record.log_events, checked.events)
    store_records(s, records)


def _kit_checks(study: Study, path: Path, marker: KitMarker) -> RaterCheck | None:
    """The rater checks of the kit's own ratings, against the lead's thresholds."""
    with study.session() as s:
        settings = load_settings(s)
        thresholds = RaterThresholds.from_json(settings.rater_thresholds)
        dimension = next((d.name for d in settings.active_dimensions()), "meaning")
    src = open_copy(path, immutable=True)
    try:
        frame = ratings_frame(src, dimension=dimension, annotator_kinds=("named",))
    finally:
        bind = src.get_bind()
        src.close()
        bind.dispose()  # type: ignore[union-attr]
    checks = checks_from_frame(frame, thresholds)
    return next((c for c in checks if c.rater == marker.rater), None)
