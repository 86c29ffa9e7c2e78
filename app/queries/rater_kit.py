"""Whether an open study file is a rater kit, and whose: the kit's marker.

A kit is a study file that carries a `kit` study setting (its marker: the lead study's id,
the kit's id and the rater); the app opens such a file in rater mode. The marker is
defined in `meaningbench.kits.record`, written by `meaningbench.kits.making` and checked on
return by `meaningbench.kits.collecting`.
"""

from __future__ import annotations

from meaningbench.kits.record import MARKER_KEY, KitMarker, read_marker
from meaningbench.queries.files import StudyHandle, study_of
from meaningbench.settings import KIT_SUFFIX

__all__ = [
    "KIT_SUFFIX",
    "MARKER_KEY",
    "KitMarker",
    "kit_marker",
    "kit_practice",
    "kit_ratings",
    "read_marker",
]


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


def kit_practice(study: StudyHandle) -> int:
    """How many practice answers the open kit holds (a rater the pass mark stopped sends
    back these alone, so that the lead sees their attempts)."""
    from sqlalchemy import func, select

    from meaningbench.db.models import PracticeAnswer

    with study_of(study).session() as s:
        return int(s.scalar(select(func.count()).select_from(PracticeAnswer)) or 0)
