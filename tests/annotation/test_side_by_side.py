"""Side-by-side units in the engine: the shown order is random, even and reproducible."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import chisquare
from sqlalchemy import text

from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.annotation.side_by_side import SideBySideSession, display_order
from meaningbench.db.study import create_study
from meaningbench.errors import UserError
from tests.annotation.factories import add_items


def test_each_output_is_equally_likely_at_each_position() -> None:
    first_at = Counter()
    for g in range(900):
        ids = [10 * g + 1, 10 * g + 2, 10 * g + 3]
        first_at[display_order(7, "rater", ids).index(ids[0])] += 1
    assert chisquare([first_at[0], first_at[1], first_at[2]]).pvalue > 0.001


def test_the_order_depends_on_the_rater_and_not_on_how_ids_arrive() -> None:
    ids = [4, 9, 2, 7]
    assert display_order(3, "ann", ids) == display_order(3, "ann", sorted(ids))
    by_rater = {tuple(display_order(3, f"r{i}", ids)) for i in range(40)}
    assert len(by_rater) > 5


@pytest.fixture
def study(tmp_path: Path):
    st = create_study(tmp_path / "sxs.mbstudy")
    add_items(st, 3, 5)
    with st.session() as s:
        cfg = load_settings(s)
        cfg.seed, cfg.qc_enabled, cfg.sxs_width = 2, False, 3
        save_settings(s, cfg)
    yield st
    st.close()


def test_a_unit_is_at_most_the_study_width_of_one_source(study) -> None:
    set_protocol(study, "sxs")
    sxs = SideBySideSession(AnnotationSession(study, "ann"))
    sizes = []
    while (unit := sxs.next_unit()) is not None:
        sizes.append(len(unit.items))
        assert len({i.source for i in unit.items}) == 1
        sxs.submit_unit(unit, {i: 50.0 for i in unit.item_ids})
    assert sorted(sizes) == [2, 2, 2, 3, 3, 3]


def test_a_unit_with_an_unrated_output_is_refused(study) -> None:
    set_protocol(study, "sxs")
    sxs = SideBySideSession(AnnotationSession(study, "ann"))
    unit = sxs.next_unit()
    assert unit is not None
    with pytest.raises(UserError, match="1 without one"):
        sxs.submit_unit(unit, {i: 50.0 for i in unit.item_ids[1:]})


def test_sxs_needs_the_sxs_protocol(study) -> None:
    with pytest.raises(UserError, match="not sxs"):
        SideBySideSession(AnnotationSession(study, "ann"))


def test_a_unit_is_stored_whole_or_not_at_all(study) -> None:
    """One output's write failing (here its queue entry was taken away by another process
    while the unit was on screen) must not leave the others stored: a unit is one
    submission."""
    import sqlite3

    set_protocol(study, "sxs")
    sess = AnnotationSession(study, "ann")
    sxs = SideBySideSession(sess)
    unit = sxs.next_unit()
    assert unit is not None and len(unit.item_ids) == 3
    other = sqlite3.connect(study.path)
    with other:
        other.execute("DELETE FROM queue_entry WHERE item_id = ?", (unit.item_ids[-1],))
    other.close()
    with pytest.raises(UserError, match="not in ann's queue"):
        sxs.submit_unit(unit, {i: 40.0 for i in unit.item_ids})
    with study.session() as s:
        assert s.execute(text("SELECT COUNT(*) FROM rating")).scalar() == 0
        done = s.execute(text("SELECT COUNT(*) FROM queue_entry WHERE done")).scalar()
    assert done == 0
    assert sess.progress().rated == 0
