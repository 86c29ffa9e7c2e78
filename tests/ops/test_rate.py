"""A rating and its undo through the ops, on a real study: the rows written and withdrawn,
the rated item named in `StudyChanges.ratings`, and a refused rating that writes nothing."""

from __future__ import annotations

import pytest

from meaningbench.annotation.settings import AnnotationSettings
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.rate import (
    open_rating,
    open_side_by_side,
    submit_rating,
    submit_unit,
    undo_rating,
    undo_unit,
)
from meaningbench.ops.settings import store_settings
from meaningbench.runtime import JobContext
from tests.annotation.factories import add_items
from tests.ops.study_rows import every_row, rows

RATINGS = (
    "SELECT r.item_id, r.value, r.state FROM rating r JOIN annotator a ON a.id = r.annotator_id "
    "WHERE a.name = ? ORDER BY r.id"
)


def test_a_rating_is_stored_and_its_undo_withdraws_it(new_study: Study) -> None:
    add_items(new_study, 3, 2)
    session = open_rating(new_study, "ann")(JobContext()).value
    shown = session.next()
    assert shown is not None
    item = shown.item_id
    values = {sc.name: 40.0 for sc in session.scales}
    changes = submit_rating(session, item, values, {}, shown.shown_at)(JobContext())
    assert changes.ratings == {item} and not changes.items and not changes.everything
    stored = rows(new_study.path, RATINGS, "ann")
    assert stored == [(item, 40.0, "current")] * len(session.scales)

    # A second rating of the item supersedes the first.
    again = {sc.name: 70.0 for sc in session.scales}
    assert submit_rating(session, item, again, {}, None)(JobContext()).ratings == {item}
    states = sorted(rows(new_study.path, RATINGS, "ann"), key=lambda r: r[2])
    assert states == sorted(
        [(item, 70.0, "current"), (item, 40.0, "superseded")] * len(session.scales),
        key=lambda r: r[2],
    )

    # The undo withdraws the revision (the first rating is current again), then the first.
    for left in ([(40.0, "current"), (70.0, "undone")], [(40.0, "undone"), (70.0, "undone")]):
        undone = undo_rating(session)(JobContext())
        assert undone.value is not None and undone.value.item_id == item
        assert undone.changes.ratings == {item}
        by_value = rows(
            new_study.path,
            "SELECT DISTINCT value, state FROM rating WHERE item_id = ? ORDER BY value",
            item,
        )
        assert by_value == left


def test_an_undo_with_nothing_rated_changes_nothing(new_study: Study) -> None:
    add_items(new_study, 2, 2)
    session = open_rating(new_study, "ann")(JobContext()).value
    before = every_row(new_study.path)
    undone = undo_rating(session)(JobContext())
    assert undone.value is None and not undone.changes
    assert every_row(new_study.path) == before


def test_a_rating_off_the_scale_is_refused_and_writes_nothing(new_study: Study) -> None:
    add_items(new_study, 2, 2)
    session = open_rating(new_study, "ann")(JobContext()).value
    shown = session.next()
    assert shown is not None
    before = every_row(new_study.path)
    values = {sc.name: sc.max_value + 1 for sc in session.scales}
    with pytest.raises(UserError, match="outside"):
        submit_rating(session, shown.item_id, values, {}, shown.shown_at)(JobContext())
    assert every_row(new_study.path) == before


def test_a_side_by_side_unit_is_rated_and_undone_whole(new_study: Study) -> None:
    add_items(new_study, 3, 2)
    store_settings(new_study, AnnotationSettings(protocol="sxs"), {"p": ("protocol",)})(
        JobContext()
    )
    sxs = open_side_by_side(new_study, "ann")(JobContext()).value
    unit = sxs.next()
    assert unit is not None and len(unit.item_ids) >= 2
    values = {i: 10.0 * (k + 1) for k, i in enumerate(unit.item_ids)}
    changes = submit_unit(sxs, unit, values, {})(JobContext())
    assert changes.ratings == set(unit.item_ids)
    stored = rows(new_study.path, RATINGS, "ann")
    assert sorted(stored) == sorted((i, v, "current") for i, v in values.items())

    undone = undo_unit(sxs)(JobContext())
    assert undone.value is not None and set(undone.value.item_ids) == set(unit.item_ids)
    assert undone.changes.ratings == set(unit.item_ids)
    assert rows(new_study.path, "SELECT COUNT(*) FROM rating WHERE state = 'current'") == [(0,)]
    nothing = undo_unit(sxs)(JobContext())
    assert nothing.value is None and not nothing.changes
