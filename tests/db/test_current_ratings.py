"""Which ratings count is one rule (`meaningbench.db.current_ratings`): its SQL text, its ORM
condition and its row test pick the same rows, and so do the readers built on it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy import select, text

from meaningbench.db.current_ratings import (
    current_rating_sql,
    holds_current,
    is_current,
)
from meaningbench.db.frames import ratings_frame
from meaningbench.db.models import Rating
from meaningbench.queries.browser import connect_readonly, fetch_rows
from meaningbench.queries.study import study_counts
from tests.ui.factories import populated_study


def test_every_form_of_the_rule_and_its_readers_pick_the_same_ratings(tmp_path: Path) -> None:
    study, facts = populated_study(tmp_path / "s.mbstudy")
    try:
        with study.session() as s:  # an undone rating beside the current and superseded ones
            last = s.scalars(select(Rating).order_by(Rating.id.desc()).limit(1)).one()
            last.state = "undone"
            s.commit()
        raw = sqlite3.connect(study.path)
        try:
            states = dict(raw.execute("SELECT id, state FROM rating").fetchall())
        finally:
            raw.close()
        counted = {rid for rid, state in states.items() if state == "current"}
        assert set(states.values()) == {"current", "superseded", "undone"}

        with study.session() as s:
            assert set(s.scalars(select(Rating.id).where(is_current()))) == counted
            assert {r.id for r in s.scalars(select(Rating)) if holds_current(r)} == counted
            aliased_sql = f"SELECT r.id FROM rating r WHERE {current_rating_sql('r')}"
            bare_sql = f"SELECT id FROM rating WHERE {current_rating_sql('')}"
            assert {i for (i,) in s.execute(text(aliased_sql))} == counted
            assert {i for (i,) in s.execute(text(bare_sql))} == counted
            assert set(ratings_frame(s)["rating_id"]) == counted
        assert study_counts(study).ratings == len(counted)
        conn = connect_readonly(str(study.path))
        try:
            rows = fetch_rows(conn, facts.item_ids + facts.control_ids, None)
        finally:
            conn.close()
        assert sum(r.n_ratings for r in rows.values()) == len(counted)
    finally:
        study.close()
