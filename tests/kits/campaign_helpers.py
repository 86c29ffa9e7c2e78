"""What the scripted campaigns share: the lead's study, the value each rater gives each
item, the ratings a study holds and a tampered kit (the campaign through the rating
engine, `test_scripted_campaign`, and through the real window, `test_rater_window`)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.models import Annotator, Item, MetricRun, Rating, Score, utcnow
from meaningbench.db.study import Study, copy_study, create_study, open_study
from meaningbench.kits.record import kit_records
from tests.annotation.factories import add_items

RATERS = ("ana", "ben", "carla")


def lead_study(path: Path, seed: int, n_sources: int = 30) -> Study:
    """A study of `n_sources` × 2 items (60 by default), overlap 2 of 3, with references,
    published labels and metric scores that a kit must not carry."""
    study = create_study(path)
    ids = add_items(study, n_sources, 2, seed=seed)
    with study.session(write=True) as s:
        # Imported references: the controls made later have none of their own.
        for item in s.scalars(select(Item).where(Item.id.in_(ids))):
            item.references = [f"A reference of item {item.id}."]
        cfg = load_settings(s)
        cfg.overlap_k, cfg.pool_size, cfg.seed = 2, 3, 11
        save_settings(s, cfg)
        labels = Annotator(name="aggregate:published", kind="aggregate", meta={})
        run = MetricRun(metric="bleu", config={}, config_hash="x", label="BLEU", status="done")
        s.add_all([labels, run])
        s.flush()
        for i in ids:
            s.add(
                Rating(
                    item_id=i, annotator_id=labels.id, dimension_id=1, value=50.0, origin="import:x"
                )
            )
            s.add(Score(run_id=run.id, item_id=i, value=0.5))
    return study


# A kit's first rating set to a value its rater did not give: blind kits' keys, and so the
# values `rating_value` gives, vary from run to run, and a fixed 99 was sometimes the value.
FORGED_VALUE = "CASE WHEN value = 99 THEN 98 ELSE 99 END"
FORGE_FIRST_RATING = (
    f"UPDATE rating SET value = {FORGED_VALUE} WHERE id = (SELECT MIN(id) FROM rating)"
)


def rating_value(rater: str, key: str, kind: str) -> float:
    if kind == "control-identical":
        return 100.0
    digest = hashlib.sha256(f"{rater}|{key}".encode()).digest()
    return float(digest[0] % 101)


def lead_keys(lead: Path | Study) -> dict[str, tuple[str, str]]:
    """Every blind kit item's key (as the kit holds it) → its (pair key, kind) at the lead's."""
    study = open_study(lead) if isinstance(lead, Path) else lead
    try:
        with study.session() as s:
            keys = {
                k: int(v[0]) for r in kit_records(s).values() for k, v in (r.blind or {}).items()
            }
            items = dict(
                (i, (key, kind))
                for i, key, kind in s.execute(select(Item.id, Item.pair_key, Item.kind))
            )
    finally:
        if isinstance(lead, Path):
            study.close()
    return {k: items[i] for k, i in keys.items()}


def held_in_kit(kit: Path, lead: Path | Study) -> dict[tuple[str, str, str], float]:
    """A kit's current ratings, keyed as the lead's study knows their items."""
    keys = lead_keys(lead)
    study = open_study(kit)
    try:
        held, _rows = held_ratings(study)
    finally:
        study.close()
    return {(a, *keys.get(k, (k, kind))): v for (a, k, kind), v in held.items()}


def rate_kit(
    path: Path,
    rater: str,
    limit: int | None = None,
    seconds: Callable[[int], float] | None = None,
    lead: Path | Study | None = None,
) -> dict[tuple[str, str, str], float]:
    """Rate a kit as its rater does, through the rating screen's engine; returns what was given.
    `seconds(n)`: how long the rater looked at the n-th item (else: the blink it took).
    `lead`: the study the kit was made from, whose key names the items as it knows them and
    tells its controls (a rater, who cannot, rates a control as any other item)."""
    given = {}
    keys = lead_keys(lead) if lead is not None else {}
    kit = open_study(path)
    try:
        session = AnnotationSession(kit, rater)
        while (shown := session.current()) is not None and (limit is None or len(given) < limit):
            with kit.session() as s:
                item = s.get(Item, shown.item_id)
                assert item is not None
                key, kind = keys.get(item.pair_key, (item.pair_key, item.kind))
            value = rating_value(rater, key, kind)
            shown_at = (
                None if seconds is None else utcnow() - timedelta(seconds=seconds(len(given)))
            )
            session.submit(shown.item_id, {"meaning": value}, shown_at=shown_at)
            session.advance()
            given[(rater, key, kind)] = value
    finally:
        kit.close()
    return given


def held_ratings(study: Study) -> tuple[dict[tuple[str, str, str], float], int]:
    """The named raters' current ratings, and the number of their rating rows of any state."""
    with study.session() as s:
        rows = s.execute(
            select(Annotator.name, Item.pair_key, Item.kind, Rating.value)
            .join(Annotator, Annotator.id == Rating.annotator_id)
            .join(Item, Item.id == Rating.item_id)
            .where(Annotator.kind == "named", Rating.state == "current")
        ).all()
        n = s.scalar(
            select(func.count())
            .select_from(Rating)
            .join(Annotator)
            .where(Annotator.kind == "named")
        )
    return {(a, k, kind): v for a, k, kind, v in rows}, int(n or 0)


def tamper(src: Path, dest: Path) -> None:
    """A returned kit with one pair's output edited (and its rating left as it was)."""
    copy_study(src, dest)
    conn = sqlite3.connect(str(dest))
    with conn:
        conn.execute(
            "UPDATE item SET output = output || ' (edited)' WHERE id = (SELECT MIN(id) FROM item)"
        )
    conn.close()


def edit_kit_records(lead_path: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    """Apply `edit` to each of the lead's kit records in place, as an older MeaningBench or
    a hand edit would have left them."""
    conn = sqlite3.connect(lead_path)
    with conn:
        (raw,) = conn.execute("SELECT value FROM study_setting WHERE key = 'kits'").fetchone()
        records = json.loads(raw)
        for record in records.values():
            edit(record)
        conn.execute(
            "UPDATE study_setting SET value = ? WHERE key = 'kits'", (json.dumps(records),)
        )
    conn.close()
