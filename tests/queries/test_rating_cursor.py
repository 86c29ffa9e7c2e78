"""The rating screens' read-only cursor over a rater's queue, on real study files: opened by
an op (the rater and their queue are written then), it answers in values and moves through
the queue without writing; the ops write through it, and a write that fails leaves what it
tells (the counts, the item under revision) as it was. (A write fails here as on a full
disk: SQLite refuses the commit, after the session has done all it does in the
transaction.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from meaningbench.annotation.practice import add_practice
from meaningbench.annotation.settings import AnnotationSettings, load_settings, save_settings
from meaningbench.db.study import Study, create_study
from meaningbench.errors import UserError
from meaningbench.ops.flag import flag_item
from meaningbench.ops.practice import answer_practice, open_practice
from meaningbench.ops.rate import (
    open_rating,
    open_side_by_side,
    submit_rating,
    submit_unit,
    undo_rating,
    undo_unit,
)
from meaningbench.ops.settings import store_settings
from meaningbench.ops.skip import skip_item
from meaningbench.queries.rating_cursor import ItemCursor, Progress, UnitCursor
from meaningbench.runtime import JobContext
from tests.annotation.factories import add_items
from tests.ops.study_rows import every_row, rows
from tests.ui.annotation.faults import full_disk

QUEUE = (
    "SELECT q.item_id FROM queue_entry q JOIN annotator a ON a.id = q.annotator_id "
    "WHERE a.name = ? ORDER BY q.position"
)


@pytest.fixture
def study(tmp_path: Path):
    st = create_study(tmp_path / "cursor.mbstudy")
    add_items(st, 4, 2)
    with st.session() as s:
        cfg = load_settings(s)
        cfg.seed, cfg.qc_enabled = 5, False
        save_settings(s, cfg)
    yield st
    st.close()


def _open(study: Study, rater: str = "ann") -> ItemCursor:
    return open_rating(study, rater)(JobContext()).value


def _rate(queue: ItemCursor, value: float = 50.0) -> int:
    shown = queue.current()
    assert shown is not None
    values = {sc.name: value for sc in queue.scales}
    submit_rating(queue, shown.item_id, values, {}, shown.shown_at)(JobContext())
    queue.advance()
    return shown.item_id


def test_opening_stores_the_rater_and_their_queue_and_answers_in_values(study) -> None:
    assert rows(study.path, QUEUE, "ann") == []
    queue = _open(study)
    stored = [i for (i,) in rows(study.path, QUEUE, "ann")]
    assert len(stored) == 8 and queue.annotator_name == "ann"
    assert queue.progress() == Progress(rated=0, total=8, skipped=0)
    first = queue.current()
    assert first is not None and first.item_id == stored[0] and not first.reviewing
    # What the screen is handed are values: it cannot change the cursor's items or counts.
    for value in (first, queue.progress(), *queue.scales):
        assert dataclasses.is_dataclass(value) and value.__dataclass_params__.frozen
    assert isinstance(queue.scales, tuple)
    # A second opening finds the queue where it is.
    assert [i for (i,) in rows(study.path, QUEUE, "ann")] == stored
    assert _open(study).current().item_id == first.item_id


def test_opening_as_an_imported_rating_source_is_refused_and_writes_nothing(study) -> None:
    from tests.analysis.studybuild import add_ratings

    add_ratings(study, "csmd-mean", {1: 50.0}, kind="aggregate")
    before = every_row(study.path)
    with pytest.raises(UserError, match="not a rater"):
        open_rating(study, "csmd-mean")(JobContext())
    assert every_row(study.path) == before


def test_moving_back_and_forth_reads_only(study) -> None:
    queue = _open(study)
    rated = [_rate(queue, v) for v in (10.0, 20.0, 30.0)]
    before = every_row(study.path)
    back = queue.previous()
    assert back is not None and back.item_id == rated[-1] and back.reviewing
    assert queue.reviewing and back.values == dict.fromkeys(back.values, 30.0)
    assert queue.previous().item_id == rated[-2]
    assert queue.following().item_id == rated[-1]
    ahead = queue.following()  # past the last rated one: the next unrated item
    assert ahead is not None and ahead.item_id not in rated and not queue.reviewing
    assert queue.next().item_id == ahead.item_id
    assert every_row(study.path) == before
    assert queue.progress() == Progress(rated=3, total=8, skipped=0)


def test_the_ops_write_through_the_cursor_and_its_counts_follow(study) -> None:
    queue = _open(study)
    first = _rate(queue)
    skipped = queue.current().item_id
    skip_item(queue, skipped)(JobContext())
    assert queue.progress() == Progress(rated=1, total=8, skipped=1)
    assert queue.next().item_id != skipped
    flag_item(queue, first, "cut off")(JobContext())
    again = undo_rating(queue)(JobContext()).value
    assert again is not None and again.item_id == first and again.flagged
    assert queue.progress() == Progress(rated=0, total=8, skipped=1)
    assert queue.current().item_id == first  # an undone item is the next to rate


def test_a_skip_that_cannot_be_written_leaves_the_counts_as_they_were(study) -> None:
    queue = _open(study)
    _rate(queue)
    shown = queue.current()
    before = queue.progress()
    with full_disk(), pytest.raises(OperationalError):
        skip_item(queue, shown.item_id)(JobContext())
    assert queue.progress() == before == Progress(rated=1, total=8, skipped=0)
    assert queue.current().item_id == shown.item_id
    skip_item(queue, shown.item_id)(JobContext())  # room again: counted once
    assert queue.progress() == Progress(rated=1, total=8, skipped=1)


def test_an_undo_that_cannot_be_written_leaves_the_cursor_as_it_was(study) -> None:
    queue = _open(study)
    first = _rate(queue, 40.0)
    _rate(queue, 60.0)
    revised = queue.previous()
    assert revised is not None
    values = dict.fromkeys(revised.values, 80.0)
    submit_rating(queue, revised.item_id, values, {}, revised.shown_at)(JobContext())
    on_screen = queue.next()
    before = queue.progress()
    # The undo of a revision would bring the earlier rating back and move the cursor onto
    # that item; the undo of a first rating would reopen it. Neither reaches the file here.
    with full_disk(), pytest.raises(OperationalError):
        undo_rating(queue)(JobContext())
    assert queue.progress() == before and not queue.reviewing
    assert queue.current().item_id == on_screen.item_id
    back = undo_rating(queue)(JobContext()).value  # room again: the revision is undone
    assert back is not None and back.reviewing and queue.reviewing
    assert back.values == dict.fromkeys(back.values, 60.0)
    undo_rating(queue)(JobContext())
    with full_disk(), pytest.raises(OperationalError):
        undo_rating(queue)(JobContext())  # the first rating stays
    assert queue.progress() == Progress(rated=1, total=8, skipped=0)
    reopened = undo_rating(queue)(JobContext()).value
    assert reopened.item_id == first and not reopened.reviewing
    assert queue.progress() == Progress(rated=0, total=8, skipped=0)


@pytest.fixture
def sxs_study(study: Study) -> Study:
    store_settings(study, AnnotationSettings(protocol="sxs"), {"p": ("protocol",)})(JobContext())
    return study


def test_the_unit_cursor_steps_through_a_sources_outputs(sxs_study) -> None:
    outputs: UnitCursor = open_side_by_side(sxs_study, "ann")(JobContext()).value
    assert outputs.scale == outputs.scales[0] and outputs.protocol == "sxs"
    unit = outputs.next()
    assert unit is not None and len(unit.items) == 2 and not unit.reviewing
    assert outputs.item_ids(unit) == [i.item_id for i in unit.items]
    submit_unit(outputs, unit, dict.fromkeys(unit.item_ids, 70.0), {})(JobContext())
    following = outputs.advance()
    assert following is not None and not set(following.item_ids) & set(unit.item_ids)
    assert outputs.progress() == Progress(rated=2, total=8, skipped=0)
    before = every_row(sxs_study.path)
    back = outputs.previous()
    assert back is not None and back.reviewing and outputs.reviewing
    assert back.item_ids == unit.item_ids  # in the order first shown
    assert outputs.following().item_ids == following.item_ids and not outputs.reviewing
    assert every_row(sxs_study.path) == before
    reopened = undo_unit(outputs)(JobContext()).value
    assert reopened is not None and set(reopened.item_ids) == set(unit.item_ids)
    assert outputs.progress().rated == 0


def test_the_side_by_side_queue_needs_the_side_by_side_protocol(study) -> None:
    with pytest.raises(UserError, match="not sxs"):
        open_side_by_side(study, "ann")(JobContext())


def test_the_practice_cursor_holds_the_pairs_not_answered(study) -> None:
    add_practice(study, [("a b c", "a b", 40.0, 80.0, ""), ("d e f", "d", 0.0, 30.0, "")])
    block = open_practice(study, "newcomer")(JobContext()).value
    assert rows(study.path, "SELECT kind FROM annotator WHERE name = ?", "newcomer") == [("named",)]
    first, second = block.pending()
    assert answer_practice(block, first, 50.0)(JobContext()).value.passed
    assert block.pending() == [second]
    assert open_practice(study, "newcomer")(JobContext()).value.pending() == [second]
