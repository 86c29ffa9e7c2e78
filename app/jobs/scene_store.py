"""Scenes in the study file: read them for scoring, replace them from the editor or importers.

Scenes belong to a source group (every system's output of one source is scored against the
same scenes). A group may hold scenes of several origins at once (a parser's proposal and
an annotator's corrections); `best` takes the most trusted origin present: an annotator's
scenes over imported UCCA over a parser's guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from meaningbench.db.models import Item, Scene
from meaningbench.metrics.structural.scenes import (
    ORIGIN_CHOICES,
    SCENE_ORIGINS,
    SceneSpec,
    pick_origin,
    scene_from_row,
)


def load_scenes(
    session: Session,
    source_groups: Iterable[str] | None = None,
    *,
    origin: str = "best",
) -> dict[str, list[SceneSpec]]:
    """Scenes per source group, in their stored order; groups without scenes are absent."""
    if origin not in ORIGIN_CHOICES:
        raise ValueError(f"unknown scene origin {origin!r}; choose one of {ORIGIN_CHOICES}")
    stmt = select(Scene).order_by(Scene.source_group, Scene.position, Scene.id)
    if source_groups is not None:
        groups = sorted(set(source_groups))
        if not groups:
            return {}
        stmt = stmt.where(Scene.source_group.in_(groups))
    grouped: dict[str, dict[str, list[SceneSpec]]] = {}
    for row in session.scalars(stmt):
        grouped.setdefault(row.source_group, {}).setdefault(row.origin, []).append(
            scene_from_row(row)
        )
    out = {}
    for group, by_origin in grouped.items():
        chosen = pick_origin(by_origin, origin)
        if chosen:
            out[group] = chosen
    return out


def replace_scenes(
    session: Session,
    source_group: str,
    scenes: Sequence[SceneSpec],
    *,
    origin: str,
    annotator_id: int | None = None,
) -> list[int]:
    """Replace the group's scenes of one origin (others stay); returns the new row ids."""
    if origin not in SCENE_ORIGINS:
        raise ValueError(f"unknown scene origin {origin!r}")
    for scene in scenes:
        scene.validate()
    session.execute(delete(Scene).where(Scene.source_group == source_group, Scene.origin == origin))
    rows = [
        Scene(
            source_group=source_group,
            position=pos,
            tokens=list(s.tokens),
            main_relation=list(s.main_relation),
            participants=[p.to_json() for p in s.participants],
            origin=origin,
            annotator_id=annotator_id,
        )
        for pos, s in enumerate(scenes)
    ]
    session.add_all(rows)
    session.flush()
    return [r.id for r in rows]


def scene_counts(session: Session) -> dict[str, dict[str, int]]:
    """How many scenes of each origin each source group has."""
    rows = session.execute(
        select(Scene.source_group, Scene.origin, func.count()).group_by(
            Scene.source_group, Scene.origin
        )
    )
    out: dict[str, dict[str, int]] = {}
    for group, origin, n in rows:
        out.setdefault(group, {})[origin] = int(n)
    return out


def item_groups(session: Session, item_ids: Iterable[int]) -> dict[int, str]:
    """The stored source group of each item (items unknown to the study are absent)."""
    ids = sorted(set(item_ids))
    out: dict[int, str] = {}
    for start in range(0, len(ids), 900):  # SQLite's bound-parameter limit
        chunk = ids[start : start + 900]
        for item_id, group in session.execute(
            select(Item.id, Item.source_group).where(Item.id.in_(chunk))
        ):
            out[int(item_id)] = group
    return out
