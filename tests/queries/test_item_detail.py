"""The item detail's scores follow the one rule of which score counts
(`meaningbench.db.frames`): it shows what the browser's score columns and the comparison
view show, plus the newest error of a (metric, config) where no score counts, so a failure
stays visible."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from meaningbench.queries.browser import fetch_scores
from meaningbench.queries.compare import stored_scores
from meaningbench.queries.item_detail import ScoreLine, fetch_detail

CHRF = "c" * 16


def add_run(path: Path, label: str, rows: dict[int, tuple[float | None, str | None]]) -> int:
    """A chrF run (one config hash for every run) with (value, error) per item; its details
    name the run, so a test can see which run's row the detail shows."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            run_id = int(
                conn.execute(
                    "INSERT INTO metric_run (metric, config, config_hash, label, versions, "
                    "status, started_at, n_items, n_failed, elapsed_s) "
                    "VALUES ('chrf', '{}', ?, ?, '{}', 'done', '2024-01-01', 0, 0, 0)",
                    (CHRF, label),
                ).lastrowid
                or 0
            )
            conn.executemany(
                "INSERT INTO score (run_id, item_id, value, raw, details, error) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (run_id, i, v, v, json.dumps({"run": label}), err)
                    for i, (v, err) in rows.items()
                ],
            )
    finally:
        conn.close()
    return run_id


def _chrf(conn: sqlite3.Connection, item_id: int) -> list[ScoreLine]:
    detail = fetch_detail(conn, item_id)
    assert detail is not None
    return [s for s in detail.scores if s.metric == "chrf"]


def test_a_newer_not_defined_score_hides_an_older_value_in_the_detail_as_in_the_browser(
    study_with_facts, conn
) -> None:
    study, facts = study_with_facts
    first, second, third = facts.item_ids[:3]
    add_run(study.path, "old", {first: (0.4, None), second: (0.6, None), third: (None, "x")})
    # "not defined": a score without value and without error, newer than the values.
    add_run(study.path, "new", {first: (None, None), third: (None, "y")})
    add_run(study.path, "newest", {first: (None, "boom"), second: (None, "boom")})

    [line] = _chrf(conn, first)
    assert (line.value, line.error, line.label, line.details) == (None, None, "new", {"run": "new"})
    assert fetch_scores(conn, [first])[(first, "chrf", CHRF)] is None
    with study.session() as s:  # the comparison view's scores of one output
        [stored] = stored_scores(s, first, "chrf")
        assert (stored.value, stored.label, stored.details) == (None, "new", {"run": "new"})
        [stored] = stored_scores(s, second, "chrf")
        assert (stored.value, stored.label) == (0.6, "old")
        assert stored_scores(s, third, "chrf") == []
    # A newer error hides nothing: the older value still counts, in both views.
    [line] = _chrf(conn, second)
    assert (line.value, line.error, line.label) == (0.6, None, "old")
    assert fetch_scores(conn, [second])[(second, "chrf", CHRF)] == 0.6
    # Nothing counts: the browser shows no score, the detail the newest failure.
    [line] = _chrf(conn, third)
    assert (line.value, line.error, line.label) == (None, "y", "new")
    assert (third, "chrf", CHRF) not in fetch_scores(conn, [third])


def test_detail_and_browser_agree_on_every_item(study_with_facts, conn) -> None:
    study, facts = study_with_facts
    ids = facts.item_ids
    add_run(study.path, "a", {i: (float(n), None) for n, i in enumerate(ids[:8])})
    add_run(study.path, "b", {i: (None, None if n % 2 else "e") for n, i in enumerate(ids[4:])})
    browser = fetch_scores(conn, ids)
    for item_id in ids:
        detail = fetch_detail(conn, item_id)
        assert detail is not None
        counted = {
            (item_id, s.metric, s.config_hash): s.value for s in detail.scores if not s.error
        }
        assert counted == {k: v for k, v in browser.items() if k[0] == item_id}
