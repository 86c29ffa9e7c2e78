"""The annotation session on real study files: submit, revise, undo, skip, flag, resume."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.models import Annotator, ItemNote, QueueEntry, Rating, utcnow
from meaningbench.db.study import Study, create_study, open_study
from meaningbench.errors import UserError
from tests.annotation.factories import add_items


@pytest.fixture
def study(tmp_path: Path):
    st = create_study(tmp_path / "s.mbstudy")
    add_items(st, 8, 2)
    with st.session() as s:
        cfg = load_settings(s)
        cfg.seed = 11
        cfg.qc_enabled = False
        save_settings(s, cfg)
    yield st
    st.close()


def _ratings(study: Study, item_id: int | None = None) -> list[Rating]:
    with study.session() as s:
        q = select(Rating).order_by(Rating.id)
        if item_id is not None:
            q = q.where(Rating.item_id == item_id)
        return list(s.scalars(q))


def _rate(sess: AnnotationSession, value: float) -> int:
    item = sess.current()
    assert item is not None
    sess.submit(item.item_id, {"meaning": value}, {"meaning": None})
    sess.advance()
    return item.item_id


def test_submit_stores_one_current_rating_with_timing(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.next_item()
    assert item is not None and not item.rated
    shown = utcnow() - timedelta(seconds=3, milliseconds=250)
    sub = sess.submit(item.item_id, {"meaning": 62.0}, {"meaning": 50.0}, shown)
    [r] = _ratings(study)
    assert (r.item_id, r.value, r.state, r.origin) == (item.item_id, 62.0, "current", "ui")
    assert r.start_value == 50.0
    assert r.shown_at == shown
    assert r.duration_ms == sub.duration_ms
    expected = (r.submitted_at - shown).total_seconds() * 1000
    assert abs(r.duration_ms - expected) <= 1
    assert 3250 <= r.duration_ms < 3250 + 60_000
    assert sess.progress().rated == 1
    assert sess.next_item().item_id != item.item_id


def test_shown_at_defaults_to_when_the_session_showed_the_item(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.next_item()
    sess.submit(item.item_id, {"meaning": 10})
    [r] = _ratings(study)
    assert r.shown_at == item.shown_at and r.duration_ms >= 0


@pytest.mark.parametrize(
    "values, message",
    [({}, "No rating given"), ({"meaning": 101}, "outside"), ({"meaning": -1}, "outside")],
)
def test_bad_values_are_refused(study, values, message) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.next_item()
    with pytest.raises(UserError, match=message):
        sess.submit(item.item_id, values)
    assert _ratings(study) == []


def test_every_active_dimension_is_required_and_likert_is_whole(study) -> None:
    with study.session() as s:
        cfg = load_settings(s)
        for d in cfg.dimensions:
            if d.name == "fluency":
                d.active, d.scale = True, "likert"
        save_settings(s, cfg)
    sess = AnnotationSession(study, "alice")
    assert [sc.name for sc in sess.scales] == ["meaning", "fluency"]
    item = sess.next_item()
    with pytest.raises(UserError, match="fluency"):
        sess.submit(item.item_id, {"meaning": 50})
    with pytest.raises(UserError, match="whole number"):
        sess.submit(item.item_id, {"meaning": 50, "fluency": 2.5})
    with pytest.raises(UserError, match="outside"):
        sess.submit(item.item_id, {"meaning": 50, "fluency": 0})
    sess.submit(item.item_id, {"meaning": 50, "fluency": 4})
    assert sorted(r.value for r in _ratings(study)) == [4.0, 50.0]


def test_an_item_outside_the_queue_is_refused(study) -> None:
    sess = AnnotationSession(study, "alice")
    with pytest.raises(UserError, match="not in"):
        sess.submit(10_000, {"meaning": 5})


def test_revising_supersedes_the_old_rating(study) -> None:
    sess = AnnotationSession(study, "alice")
    first = _rate(sess, 30)
    second = _rate(sess, 40)
    back = sess.previous()
    assert back.item_id == second and back.values == {"meaning": 40.0} and back.reviewing
    back = sess.previous()
    assert back.item_id == first and back.values == {"meaning": 30.0}
    assert sess.previous() is None, "nothing before the first rated item"
    sub = sess.submit(first, {"meaning": 35}, {"meaning": 30})
    assert sub.revised
    old, new = _ratings(study, first)
    assert (old.state, new.state, new.value, new.supersedes_id) == (
        "superseded",
        "current",
        35,
        old.id,
    )
    # Enter after a revision goes on to the following rated item, then to the next unrated.
    assert sess.advance().item_id == second
    nxt = sess.advance()
    assert nxt.item_id not in (first, second) and not nxt.reviewing
    assert sess.progress().rated == 2


def test_following_past_the_last_rated_item_returns_to_the_next(study) -> None:
    sess = AnnotationSession(study, "alice")
    rated = [_rate(sess, v) for v in (10, 20, 30)]
    frontier = sess.current().item_id
    assert sess.following() is None, "already at the next unrated item"
    assert [sess.previous().item_id for _ in range(3)] == rated[::-1]
    assert [sess.following().item_id for _ in range(2)] == rated[1:]
    back = sess.following()
    assert back.item_id == frontier and not back.reviewing


def test_undo_reopens_the_item_and_goes_back_step_by_step(study) -> None:
    sess = AnnotationSession(study, "alice")
    a = _rate(sess, 10)
    b = _rate(sess, 20)
    reopened = sess.undo_last()
    assert reopened.item_id == b and not reopened.rated
    assert [r.state for r in _ratings(study, b)] == ["undone"]
    assert sess.current().item_id == b
    assert sess.progress().rated == 1
    assert sess.undo_last().item_id == a
    assert sess.undo_last() is None
    assert sess.progress().rated == 0
    # The reopened item comes first, also for a new session (the order is stored).
    assert AnnotationSession(study, "alice").next_item().item_id == a


def test_undo_of_a_revision_brings_the_old_rating_back(study) -> None:
    sess = AnnotationSession(study, "alice")
    a = _rate(sess, 10)
    b = _rate(sess, 20)
    sess.previous()
    sess.previous()
    sess.submit(a, {"meaning": 90})
    shown = sess.undo_last()
    assert shown.item_id == a and shown.values == {"meaning": 10.0}
    assert [r.state for r in _ratings(study, a)] == ["current", "undone"]
    # The next undo withdraws b, the submission made before the revision.
    assert sess.undo_last().item_id == b


def test_a_rating_brought_back_by_undo_keeps_the_flag_given_since(study) -> None:
    """A flag given after a revision was written onto the revision; undoing the revision
    must not leave the rating that comes back unflagged (exports read its columns)."""
    sess = AnnotationSession(study, "alice")
    a = _rate(sess, 40)
    sess.previous()
    sess.submit(a, {"meaning": 45})
    sess.flag(a, "source sentence is cut off")
    shown = sess.undo_last()
    assert shown.item_id == a and shown.flagged and shown.comment == "source sentence is cut off"
    current = [r for r in _ratings(study, a) if r.state == "current"]
    assert [(r.value, r.flagged, r.comment) for r in current] == [
        (40.0, True, "source sentence is cut off")
    ]
    sess.flag(a, flagged=False)  # unflagged since: the rating brought back is not flagged
    sess.previous()
    sess.submit(a, {"meaning": 50})
    sess.flag(a, "twice")
    sess.flag(a, flagged=False)
    sess.undo_last()
    assert [
        (r.value, r.flagged, r.comment) for r in _ratings(study, a) if r.state == "current"
    ] == [(40.0, False, None)]


def test_undo_leaves_other_annotators_alone(study) -> None:
    alice = AnnotationSession(study, "alice")
    bob = AnnotationSession(study, "bob")
    _rate(alice, 10)
    _rate(bob, 20)
    alice.undo_last()
    states = {r.value: r.state for r in _ratings(study)}
    assert states == {10.0: "undone", 20.0: "current"}


def test_skip_moves_the_item_to_the_end_and_is_not_a_rating(study) -> None:
    sess = AnnotationSession(study, "alice")
    total = sess.progress().total
    skipped = sess.current().item_id
    assert sess.skip(skipped)
    assert _ratings(study) == []
    p = sess.progress()
    assert (p.rated, p.skipped, p.left) == (0, 1, total)
    seen = []
    while (item := sess.current()) is not None:
        seen.append(item.item_id)
        sess.submit(item.item_id, {"meaning": 1})
        sess.advance()
    assert seen[-1] == skipped and len(seen) == total
    assert sess.skip(skipped) is False, "a rated item is not skipped"


def test_flag_with_comment_before_and_after_rating(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.current()
    sess.flag(item.item_id, "  typo in the source  ")
    assert sess.current().flagged and sess.current().comment == "typo in the source"
    sess.submit(item.item_id, {"meaning": 70})
    [r] = _ratings(study)
    assert r.flagged and r.comment == "typo in the source"
    sess.flag(item.item_id, None, flagged=False)
    [r] = _ratings(study)
    assert not r.flagged and r.comment is None
    with study.session() as s:
        notes = s.scalars(select(ItemNote).order_by(ItemNote.id)).all()
    assert [(n.flagged, n.comment) for n in notes] == [(True, "typo in the source"), (False, None)]


def test_resume_after_reopening_the_file(tmp_path: Path, study) -> None:
    sess = AnnotationSession(study, "alice")
    for v in (5, 15, 25):
        _rate(sess, v)
    sess.skip(sess.current().item_id)
    expected = sess.next_item().item_id
    progress = sess.progress()
    study.close()
    again = open_study(study.path)
    try:
        resumed = AnnotationSession(again, "alice")
        assert resumed.current().item_id == expected
        assert resumed.progress() == progress
    finally:
        again.close()


def test_annotators_do_not_see_each_others_ratings(study) -> None:
    alice = AnnotationSession(study, "alice")
    item = alice.current().item_id
    alice.submit(item, {"meaning": 77})
    bob = AnnotationSession(study, "bob")
    with study.session() as s:
        bob_id = s.scalar(select(Annotator.id).where(Annotator.name == "bob"))
        assert (
            s.scalar(
                select(QueueEntry.done).where(
                    QueueEntry.annotator_id == bob_id, QueueEntry.item_id == item
                )
            )
            is False
        )
    seen = []
    while (shown := bob.current()) is not None:
        seen.append(shown)
        bob.submit(shown.item_id, {"meaning": 1})
        bob.advance()
    assert all(not s.values for s in seen)


def test_names_are_checked(study) -> None:
    with pytest.raises(UserError):
        AnnotationSession(study, "   ")
    with study.session() as s:
        s.add(Annotator(name="csmd-mean", kind="aggregate"))
    with pytest.raises(UserError, match="aggregate"):
        AnnotationSession(study, "csmd-mean")


def test_kept_progress_matches_a_fresh_count(study) -> None:
    sess = AnnotationSession(study, "alice")
    other = AnnotationSession(study, "alice")  # a second session sees the file's counts
    steps = ["rate", "skip", "rate", "undo", "skip", "rate", "rate", "undo", "rate", "skip"]
    for step in steps:
        item = sess.current()
        if step == "rate":
            sess.submit(item.item_id, {"meaning": 50})
            sess.advance()
        elif step == "skip":
            sess.skip(item.item_id)
            sess.next_item()
        else:
            sess.undo_last()
        assert sess.progress() == other.progress(refresh=True), step
