"""Flagging through the op, on a real study: a note with the comment, the rater's current
ratings of the item marked the same, and the item named in `StudyChanges.notes`."""

from __future__ import annotations

from sqlalchemy import select

from meaningbench.annotation.settings import AnnotationSettings
from meaningbench.db.models import ItemNote, Rating
from meaningbench.db.study import Study
from meaningbench.ops.flag import flag_item, unflag_item
from meaningbench.ops.rate import open_rating, open_side_by_side, submit_rating
from meaningbench.ops.settings import store_settings
from meaningbench.runtime import JobContext
from tests.annotation.factories import add_items


def test_a_flag_and_its_removal_are_notes_that_name_the_item(new_study: Study) -> None:
    add_items(new_study, 3, 2)
    queue = open_rating(new_study, "ann")(JobContext()).value
    shown = queue.next()
    assert shown is not None
    item = shown.item_id
    values = {sc.name: 30.0 for sc in queue.scales}
    submit_rating(queue, item, values, {}, shown.shown_at)(JobContext())
    changes = flag_item(queue, item, "  cut off  ")(JobContext())
    assert changes.notes == {item} and not changes.ratings
    with new_study.session() as s:
        assert s.execute(select(ItemNote.item_id, ItemNote.flagged, ItemNote.comment)).all() == [
            (item, True, "cut off")
        ]
        assert set(s.execute(select(Rating.flagged, Rating.comment)).all()) == {(True, "cut off")}
    assert unflag_item(queue, item)(JobContext()).notes == {item}
    with new_study.session() as s:
        notes = s.execute(select(ItemNote.flagged, ItemNote.comment).order_by(ItemNote.id)).all()
        assert notes == [(True, "cut off"), (False, None)]  # the first note stays
        assert set(s.execute(select(Rating.flagged, Rating.comment)).all()) == {(False, None)}
    # The rated values are the rater's own: a flag never touches them.
    with new_study.session() as s:
        assert set(s.scalars(select(Rating.value))) == {30.0}


def test_the_side_by_side_screens_flag_names_the_output_in_focus(new_study: Study) -> None:
    add_items(new_study, 2, 2)
    store_settings(new_study, AnnotationSettings(protocol="sxs"), {"p": ("protocol",)})(
        JobContext()
    )
    outputs = open_side_by_side(new_study, "ann")(JobContext()).value
    unit = outputs.next()
    assert unit is not None
    second = unit.item_ids[1]
    assert flag_item(outputs, second, "garbled")(JobContext()).notes == {second}
    again = outputs.next()  # the same unit, read again: the flag is on that output alone
    assert again is not None and again.item_ids == unit.item_ids
    flags = {i.item_id: (i.flagged, i.comment) for i in again.items}
    assert flags.pop(second) == (True, "garbled") and set(flags.values()) == {(False, None)}
