"""Small reads of a study the window needs: its name, counts, dimensions, settings.

The settings are written by `meaningbench.ops.settings`.

Plain SQL on the caller's thread, cheap enough for the GUI thread (counts use indexes).
SQLAlchemy is imported in the functions: the window is drawn before it loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from meaningbench.core.wording import counted
from meaningbench.db.setting_keys import NAME_KEY as NAME_KEY  # the settings dialog names it
from meaningbench.queries.files import StudyHandle, study_of


@dataclass(frozen=True)
class StudyCounts:
    items: int
    control_items: int
    ratings: int
    annotators: int
    metric_runs: int
    datasets: int
    machine_ratings: int = 0  # of `ratings`, those of machine raters (an LLM judge)

    def summary(self) -> str:
        # No count of control items: the status bar is on screen while a rater rates, and
        # hidden quality-control items must stay hidden from raters (the study lead sees
        # them in the browser's kind filter and the study settings).
        parts = [counted(self.items, "item")]
        people = self.ratings - self.machine_ratings
        ratings = counted(people, "rating")
        if self.machine_ratings:
            # Imported here: the window's first drawing does not wait for the analysis.
            from meaningbench.queries.raters import MACHINE_MARK, MACHINE_TAG

            ratings += f" + {self.machine_ratings:,} {MACHINE_MARK} {MACHINE_TAG}"
        parts.append(ratings)
        parts.append(counted(self.metric_runs, "metric run"))
        return " · ".join(parts)


def get_setting(handle: StudyHandle, key: str, default: Any = None) -> Any:
    study = study_of(handle)
    from sqlalchemy import select

    from meaningbench.db.models import StudySetting

    with study.session() as s:
        value = s.scalar(select(StudySetting.value).where(StudySetting.key == key))
    return default if value is None else value


def study_name(handle: StudyHandle) -> str:
    study = study_of(handle)
    name = get_setting(study, NAME_KEY)
    if isinstance(name, str) and name.strip():
        return name.strip()
    return study.path.stem


def dimension_names(handle: StudyHandle) -> list[str]:
    """The study's rating dimensions, in the order the study lists them."""
    study = study_of(handle)
    from sqlalchemy import select

    from meaningbench.db.models import Dimension

    with study.session() as s:
        return list(s.scalars(select(Dimension.name).order_by(Dimension.position, Dimension.id)))


def study_counts(handle: StudyHandle) -> StudyCounts:
    study = study_of(handle)
    from sqlalchemy import text

    from meaningbench.db.current_ratings import current_rating_sql
    from meaningbench.queries.raters import rater_kind_sql

    with study.engine.connect() as conn:

        def one(sql: str) -> int:
            return int(conn.execute(text(sql)).scalar() or 0)

        total = one("SELECT COUNT(*) FROM item")
        regular = one("SELECT COUNT(*) FROM item WHERE kind = 'regular'")
        return StudyCounts(
            items=regular,
            control_items=total - regular,
            ratings=one(f"SELECT COUNT(*) FROM rating WHERE {current_rating_sql('')}"),
            annotators=one("SELECT COUNT(*) FROM annotator WHERE kind = 'named'"),
            # Finished runs: a cancelled, failed or interrupted run is not one more set of
            # scores (a cancelled one is resumed by the next run of its metric).
            metric_runs=one("SELECT COUNT(*) FROM metric_run WHERE status = 'done'"),
            datasets=one("SELECT COUNT(*) FROM dataset"),
            machine_ratings=one(
                f"SELECT COUNT(*) FROM rating r WHERE {current_rating_sql()} "
                f"AND {rater_kind_sql('machine')}"
            ),
        )


def reference_coverage(handle: StudyHandle) -> tuple[int, int]:
    """(regular items with human references, regular items): whether scoring against the
    source throws references away."""
    study = study_of(handle)
    from sqlalchemy import text

    with study.engine.connect() as conn:
        total = int(
            conn.execute(text("SELECT COUNT(*) FROM item WHERE kind = 'regular'")).scalar() or 0
        )
        with_refs = int(
            conn.execute(
                text(
                    "SELECT COUNT(*) FROM item WHERE kind = 'regular' AND refs IS NOT NULL "
                    "AND json_valid(refs) AND json_array_length(refs) > 0"
                )
            ).scalar()
            or 0
        )
    return with_refs, total
