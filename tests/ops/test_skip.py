"""Skipping through the op, on a real study: the item goes to the end of the rater's own
queue and comes back last; a rated item stays where it is; no other screen is told."""

from __future__ import annotations

from sqlalchemy import select

from meaningbench.annotation.settings import AnnotationSettings
from meaningbench.db.models import Annotator, QueueEntry
from meaningbench.db.study import Study
from meaningbench.ops.rate import open_rating, open_side_by_side, submit_rating
from meaningbench.ops.settings import store_settings
from meaningbench.ops.skip import skip_item, skip_unit
from meaningbench.runtime import JobContext
from tests.annotation.factories import add_items


def _queue(study: Study, rater: str) -> list[int]:
    """The rater's unrated items in the order they come."""
    with study.session() as s:
        return list(
            s.scalars(
                select(QueueEntry.item_id)
                .join(Annotator, Annotator.id == QueueEntry.annotator_id)
                .where(Annotator.name == rater, QueueEntry.done.is_(False))
                .order_by(QueueEntry.position)
            )
        )


def test_a_skipped_item_comes_back_last_and_a_rated_one_stays(new_study: Study) -> None:
    add_items(new_study, 4, 2)
    queue = open_rating(new_study, "ann")(JobContext()).value
    first = queue.next()
    assert first is not None
    before = _queue(new_study, "ann")
    assert before[0] == first.item_id
    changes = skip_item(queue, first.item_id)(JobContext())
    assert not changes  # the rater's own queue: nothing another screen shows
    assert _queue(new_study, "ann") == [*before[1:], first.item_id]
    following = queue.next()
    assert following is not None and following.item_id == before[1]
    assert queue.progress().skipped == 1
    # A rated item is not moved: skipping it changes nothing.
    values = {sc.name: 60.0 for sc in queue.scales}
    submit_rating(queue, following.item_id, values, {}, following.shown_at)(JobContext())
    skip_item(queue, following.item_id)(JobContext())
    assert _queue(new_study, "ann") == [*before[2:], first.item_id]
    assert queue.progress().skipped == 1  # skipped once, however often


def test_a_skipped_unit_brings_all_its_outputs_back_last(new_study: Study) -> None:
    add_items(new_study, 3, 2)
    store_settings(new_study, AnnotationSettings(protocol="sxs"), {"p": ("protocol",)})(
        JobContext()
    )
    outputs = open_side_by_side(new_study, "ann")(JobContext()).value
    unit = outputs.next()
    assert unit is not None and len(unit.item_ids) >= 2
    n = len(unit.item_ids)
    assert not skip_unit(outputs, unit)(JobContext())
    queue = _queue(new_study, "ann")
    assert sorted(queue[-n:]) == sorted(unit.item_ids)
    assert outputs.progress().skipped == n
    after = outputs.next()
    assert after is not None and not set(after.item_ids) & set(unit.item_ids)
