"""Whether an open study file is a rater kit, and whose: the kit's marker.

A kit is a study file that carries a `kit` study setting (its marker: the lead study's id,
the kit's id and the rater); the app opens such a file in rater mode. The marker is
written by `meaningbench.kits.making` and checked on return by `meaningbench.kits.collecting`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy.orm import Session

from meaningbench.db.models import StudySetting
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.settings import KIT_SUFFIX

__all__ = ["KIT_SUFFIX", "MARKER_KEY", "KitMarker", "kit_marker", "kit_ratings", "read_marker"]

MARKER_KEY = "kit"


@dataclass(frozen=True)
class KitMarker:
    """What a kit says of itself (the `kit` setting of the kit file)."""

    study_id: str
    kit_id: str
    rater: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Any) -> KitMarker | None:
        if not isinstance(raw, dict):
            return None
        try:
            return cls(str(raw["study_id"]), str(raw["kit_id"]), str(raw["rater"]))
        except KeyError:
            return None


def read_marker(session: Session) -> KitMarker | None:
    """The kit marker of a study file; None for a study that is not a kit."""
    row = session.get(StudySetting, MARKER_KEY)
    return KitMarker.from_json(row.value if row is not None else None)


def kit_marker(study: StudyHandle) -> KitMarker | None:
    """The open study's kit marker (None: a study of its own, not a kit)."""
    with study_of(study).session() as s:
        return read_marker(s)


def kit_ratings(study: StudyHandle) -> int:
    """How many items the open kit's rater has rated (current ratings; what a send-back
    carries)."""
    from sqlalchemy import distinct, func, select

    from meaningbench.db.current_ratings import is_current
    from meaningbench.db.models import Annotator, Rating

    with study_of(study).session() as s:
        found = s.scalar(
            select(func.count(distinct(Rating.item_id)))
            .join(Annotator, Annotator.id == Rating.annotator_id)
            .where(is_current(), Annotator.kind == "named")
        )
    return int(found or 0)
