"""The rater's progress in words: the counter ("Item 37 of 119"), the time spent and the end
screen's summary; on a real study with hidden controls, every queue entry counts as one
item, so neither the total nor the counter on a control tells it from a regular item."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from meaningbench.annotation.model import Progress
from meaningbench.annotation.session import AnnotationSession
from meaningbench.db.models import Item, QueueEntry, utcnow
from meaningbench.queries.queue_progress import Standing, counter_text, end_summary, spent_text
from meaningbench.queries.rating_cursor import ItemCursor


def _standing(rated: int, total: int, skipped: int = 0, *, on_screen: int = 1,
              reviewing: bool = False, minutes: float = 0) -> Standing:  # fmt: skip
    return Standing(
        Progress(rated=rated, total=total, skipped=skipped),
        on_screen=on_screen,
        reviewing=reviewing,
        spent=timedelta(minutes=minutes),
    )


def test_spent_time_reads_in_minutes_and_hours() -> None:
    assert spent_text(timedelta(seconds=59)) == "under 1 min"
    assert spent_text(timedelta(minutes=12, seconds=50)) == "12 min"
    assert spent_text(timedelta(hours=1, minutes=5)) == "1 h 05 min"
    assert spent_text(timedelta(hours=26)) == "26 h 00 min"


def test_the_counter_names_the_item_on_screen_and_the_end() -> None:
    assert counter_text(_standing(36, 119, minutes=42)) == "Item 37 of 119 · 42 min spent"
    # A skip does not move the number on: the skipped item comes back, and is counted so.
    assert counter_text(_standing(36, 119, 1, minutes=42)) == (
        "Item 37 of 119 · 1 skipped · 42 min spent"
    )
    assert counter_text(_standing(36, 119, reviewing=True)) == (
        "Revising · 36 of 119 rated · under 1 min spent"
    )
    assert counter_text(_standing(119, 119, on_screen=0, minutes=90)) == (
        "119 of 119 rated · 1 h 30 min spent"
    )
    assert counter_text(_standing(4, 12, on_screen=4), "Output", "Outputs") == (
        "Outputs 5–8 of 12 · under 1 min spent"
    )
    assert counter_text(_standing(11, 12, on_screen=1), "Output", "Outputs").startswith(
        "Output 12 of 12"
    )
    assert end_summary(_standing(119, 119, on_screen=0, minutes=90)) == (
        "You rated every one of the 119 items in your queue, in 1 h 30 min of rating time."
    )


def test_controls_count_as_items_and_the_counter_never_tells_them(study_with_facts) -> None:
    study, _facts = study_with_facts
    cursor = ItemCursor(AnnotationSession(study, "cara"))
    with study.session() as s:
        controls = set(s.scalars(select(Item.id).where(Item.kind.startswith("control"))))
        entries = s.scalar(
            select(func.count()).where(QueueEntry.annotator_id == cursor._session.annotator_id)  # noqa: SLF001
        )
    assert cursor.progress().total == entries
    texts: dict[bool, set[str]] = {True: set(), False: set()}
    n = 0
    while (item := cursor.next()) is not None:
        n += 1
        text = counter_text(cursor.standing(1))
        assert text == f"Item {n} of {entries} · under 1 min spent"
        texts[item.item_id in controls].add(text.split(" · ")[0].split(" ")[0])
        now = utcnow()
        cursor._session.submit(  # noqa: SLF001 - the engine's write, as the op makes it
            item.item_id,
            {"meaning": 50.0},
            None,
            now - timedelta(milliseconds=100),
            submitted_at=now,
        )
    assert texts[True] == texts[False] == {"Item"}, "controls were in the queue and looked alike"
    assert n == entries
    end = cursor.standing(0)
    assert end.progress.rated == entries and end.spent == timedelta(milliseconds=100 * entries)
