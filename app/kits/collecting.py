"""Collecting returned kits: each checked against the lead's record, then merged whole.

A kit is refused, with its file named and nothing of it merged, when it is no kit, a kit
of another study, a kit this study has no record of, or a tampered one (its items, ids or
raters no longer those it was made with: see `meaningbench.kits.record`). The others are
still collected. Each accepted kit goes through the merge (`meaningbench.annotation.merge`)
in one transaction, so it comes in whole or not at all; a kit collected again adds
nothing, as the merge recognises what is already here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.analysis.rater_checks import RaterCheck, RaterThresholds, checks_from_frame
from meaningbench.annotation.merge import MergeReport, merge_ratings, open_copy
from meaningbench.annotation.settings import load_settings
from meaningbench.cluster.study_id import read_study_id
from meaningbench.db.frames import ratings_frame
from meaningbench.db.models import Annotator, Dimension, utcnow
from meaningbench.db.study import Study
from meaningbench.errors import UserError
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


@dataclass
class KitReturn:
    """One kit collected: whose, what the merge brought in, and the kit's controls."""

    path: Path
    rater: str
    kit_id: str
    merge: MergeReport
    # The rater's checks on this kit's ratings alone (controls passed); None: no ratings.
    controls: RaterCheck | None


@dataclass
class CollectReport:
    collected: list[KitReturn] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)


def returned_kits(folder: Path) -> list[Path]:
    """The kit files of a folder, by name (hidden partial files left out)."""
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder")
    return sorted(p for p in folder.glob(f"*{KIT_SUFFIX}") if not p.name.startswith("."))


def collect_kits(
    study: Study, folder: Path, *, on_kit: Callable[[Path], None] | None = None
) -> CollectReport:
    """Merge every kit in `folder` into `study`; a refused kit is reported, not raised."""
    if study.read_only:
        raise UserError(f"{study.path}: read-only; collected ratings could not be stored.")
    study_id = read_study_id(study)
    report = CollectReport()
    for path in returned_kits(folder):
        if on_kit is not None:
            on_kit(path)
        try:
            marker = verify_kit(study, study_id, path)
        except UserError as exc:
            report.refused.append((path, str(exc)))
            continue
        # One chunk, no pause: the kit comes in whole in one transaction or not at all.
        merged = merge_ratings(study, path, chunk_items=1 << 30, chunk_gap_s=0)
        if merged.ratings_added or merged.duplicates:
            # A kit with no rating in it (not rated yet) is no return.
            _note_return(study, marker)
        report.collected.append(
            KitReturn(path, marker.rater, marker.kit_id, merged, _kit_checks(study, path, marker))
        )
    return report


def verify_kit(study: Study, study_id: str | None, path: Path) -> KitMarker:
    """The kit's marker when the kit is this study's and untouched; else a UserError."""
    src = open_copy(path)
    try:
        marker = read_marker(src)
        if marker is None:
            raise UserError(f"{path}: not a rater kit (a study file without a kit marker)")
        if study_id is None or marker.study_id != study_id:
            raise UserError(f"{path}: a kit of another study; nothing was merged")
        with study.session() as s:
            record = kit_records(s).get(marker.kit_id)
            secret = read_secret(s)
            dimensions = set(s.scalars(select(Dimension.name)))
        if record is None or secret is None:
            raise UserError(
                f"{path}: this study made no kit with this id (edited?); nothing was merged"
            )
        _check_contents(src, path, marker, record, secret, dimensions)
        return marker
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
            f"{tampered} (its rater is now {marker.rater!r}, not {record.rater!r}); nothing was merged"
        )
    names = set(src.scalars(select(Annotator.name)))
    if names - {marker.rater}:
        others = ", ".join(sorted(names - {marker.rater}))
        raise UserError(f"{tampered} (it holds other raters: {others}); nothing was merged")
    if not signature_matches(secret, marker, item_identities(src), record.signature):
        raise UserError(f"{tampered} (its items were added to or edited); nothing was merged")
    extra = set(src.scalars(select(Dimension.name))) - dimensions
    if extra:
        raise UserError(
            f"{tampered} (new dimensions: {', '.join(sorted(extra))}); nothing was merged"
        )


def _note_return(study: Study, marker: KitMarker) -> None:
    with study.session(write=True) as s:
        records = kit_records(s)
        records[marker.kit_id].returns.append(utcnow().isoformat(timespec="seconds"))
        store_records(s, records)


def _kit_checks(study: Study, path: Path, marker: KitMarker) -> RaterCheck | None:
    """The rater checks of the kit's own ratings, against the lead's thresholds."""
    with study.session() as s:
        settings = load_settings(s)
        thresholds = RaterThresholds.from_json(settings.rater_thresholds)
        dimension = next((d.name for d in settings.active_dimensions()), "meaning")
    src = open_copy(path)
    try:
        frame = ratings_frame(src, dimension=dimension, annotator_kinds=("named",))
    finally:
        bind = src.get_bind()
        src.close()
        bind.dispose()  # type: ignore[union-attr]
    checks = checks_from_frame(frame, thresholds)
    return next((c for c in checks if c.rater == marker.rater), None)
