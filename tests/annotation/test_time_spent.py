"""The time a rater spent rating, from the durations the study file records: each
submission counted once (however many dimensions or outputs it rated), revisions and undone
ratings included, imported ratings adding nothing; the tally a screen keeps agrees with a
fresh count after every write."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.annotation.side_by_side import SideBySideSession
from meaningbench.annotation.time_spent import SpentTally, rating_time
from meaningbench.db.models import Annotator, Rating, utcnow
from meaningbench.db.study import Study, create_study
from tests.annotation.factories import add_items


@pytest.fixture
def study(tmp_path: Path):
    st = create_study(tmp_path / "t.mbstudy")
    add_items(st, 6, 2)
    with st.session() as s:
        cfg = load_settings(s)
        cfg.seed, cfg.qc_enabled = 5, False
        for d in cfg.dimensions:  # two scales: one submission writes two rows
            d.active = d.name in ("meaning", "fluency")
        save_settings(s, cfg)
    yield st
    st.close()


def _submit(sess: AnnotationSession, seconds: float) -> int:
    """Rate the next item as if it had been on screen for `seconds`."""
    item = sess.next_item()
    assert item is not None
    now = utcnow()
    values = {sc.name: 50.0 for sc in sess.scales}
    sess.submit(item.item_id, values, None, now - timedelta(seconds=seconds), submitted_at=now)
    return item.item_id


def test_each_submission_counts_once_revisions_and_undos_included(study: Study) -> None:
    sess = AnnotationSession(study, "ana")
    assert len(sess.scales) == 2
    tally = SpentTally(study, sess.annotator_id)
    assert rating_time(study, sess.annotator_id) == tally.total() == timedelta(0)
    first = _submit(sess, 4)
    _submit(sess, 6)
    with study.session() as s:
        assert len(s.scalars(select(Rating)).all()) == 4  # two rows per submission
    assert rating_time(study, sess.annotator_id) == tally.total() == timedelta(seconds=10)
    # A revision is time spent too; so is a rating later undone.
    now = utcnow()
    sess.submit(first, {"meaning": 70.0, "fluency": 60.0}, None, now - timedelta(seconds=3),
                submitted_at=now)  # fmt: skip
    assert tally.total() == timedelta(seconds=13)
    assert sess.undo_last() is not None
    assert rating_time(study, sess.annotator_id) == tally.total() == timedelta(seconds=13)


def test_other_raters_and_imported_ratings_add_nothing(study: Study) -> None:
    ana = AnnotationSession(study, "ana")
    tally = SpentTally(study, ana.annotator_id)
    _submit(ana, 2)
    assert tally.total() == timedelta(seconds=2)
    ben = AnnotationSession(study, "ben")
    _submit(ben, 30)
    with study.session(write=True) as s:  # an imported rating of ana's: no duration
        ana_row = s.scalars(select(Annotator).where(Annotator.name == "ana")).one()
        dim = s.scalars(select(Rating.dimension_id)).first()
        s.add(Rating(item_id=1, annotator_id=ana_row.id, dimension_id=dim, value=1.0,
                     submitted_at=utcnow(), duration_ms=None, origin="import:x.csv"))  # fmt: skip
    assert tally.total() == rating_time(study, ana.annotator_id) == timedelta(seconds=2)
    assert rating_time(study, ben.annotator_id) == timedelta(seconds=30)
    # A tally made now starts from the file as it is.
    assert SpentTally(study, ana.annotator_id).total() == timedelta(seconds=2)


def test_a_side_by_side_unit_counts_once(tmp_path: Path) -> None:
    from meaningbench.annotation.protocols import set_protocol

    st = create_study(tmp_path / "sxs.mbstudy")
    try:
        add_items(st, 3, 4)
        with st.session() as s:
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 5, False
            save_settings(s, cfg)
        set_protocol(st, "sxs")
        sxs = SideBySideSession(AnnotationSession(st, "ana"))
        unit = sxs.next_unit()
        assert unit is not None and len(unit.item_ids) == 4
        sxs.submit_unit(unit, dict.fromkeys(unit.item_ids, 40.0))
        with st.session() as s:
            durations = s.scalars(select(Rating.duration_ms)).all()
        assert len(durations) == 4 and len(set(durations)) == 1
        assert rating_time(st, sxs.session.annotator_id) == timedelta(milliseconds=durations[0])
    finally:
        st.close()
