"""The browser's reads of a study with a machine rater (a tiny LLM judge stored by
`meaningbench judge --as-rater` over real CSMD dev pairs): its ratings are marked with the
judge that made them, counted apart, filterable, and never part of an item's human score."""

from __future__ import annotations

import csv
import sqlite3
from collections.abc import Iterator

import pytest

from meaningbench.queries.browser import BrowserFilter, connect_readonly, fetch_rows, load_ids
from meaningbench.queries.item_detail import fetch_detail
from meaningbench.queries.raters import MACHINE_KIND, machine_raters
from tests.judged_study import CSMD_DEV, RATER, JudgedStudy, judged_csmd_study


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> JudgedStudy:
    return judged_csmd_study(tmp_path_factory.mktemp("judged"))


@pytest.fixture
def conn(judged: JudgedStudy) -> Iterator[sqlite3.Connection]:
    connection = connect_readonly(str(judged.path))
    yield connection
    connection.close()


def _judge_scores(conn: sqlite3.Connection) -> tuple[str, dict[int, float]]:
    """The judge's stored scores (the metric's own table, not the ratings) and its spec."""
    spec = conn.execute(
        "SELECT json_extract(meta, '$.judge') FROM annotator WHERE name = ?", (RATER,)
    ).fetchone()[0]
    rows = conn.execute(
        "SELECT s.item_id, s.value FROM score s JOIN metric_run m ON m.id = s.run_id "
        "WHERE m.metric = 'llm_judge' AND s.error IS NULL"
    ).fetchall()
    return str(spec), {int(i): float(v) for i, v in rows}


def _csmd_labels(n: int) -> list[float]:
    with CSMD_DEV.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return [float(r["label"]) for r in rows[:n]]


def test_the_detail_marks_the_machine_rating_with_its_judge(judged, conn) -> None:
    spec, scores = _judge_scores(conn)
    assert spec.startswith(f"llm_judge[model={judged.model}")
    assert machine_raters(conn)[0].name == RATER and len(machine_raters(conn)) == 1
    for item in judged.judged:
        detail = fetch_detail(conn, item)
        assert detail is not None
        kinds = [(r.annotator_kind, r.machine) for r in detail.ratings]
        # The published label first, the model's rating last and marked.
        assert kinds == [("aggregate", False), (MACHINE_KIND, True)]
        machine = detail.ratings[-1]
        assert machine.annotator == RATER and machine.judge == spec
        assert machine.value == pytest.approx(scores[item])  # 0–100 onto a 0–100 dimension
        assert RATER in machine.machine_tooltip and spec in machine.machine_tooltip
        assert "never part of an item's human score" in machine.machine_tooltip
        assert detail.ratings[0].machine_tooltip == ""
    for item in judged.unjudged:
        detail = fetch_detail(conn, item)
        assert detail is not None and not any(r.machine for r in detail.ratings)


def test_whose_ratings_count_for_rated_and_unrated(judged, conn) -> None:
    every = judged.judged + judged.unjudged

    def ids(**f: object) -> list[int]:
        return list(load_ids(conn, BrowserFilter(**f)))  # type: ignore[arg-type]

    assert ids(rated="rated", raters="machine") == judged.judged
    assert ids(rated="unrated", raters="machine") == judged.unjudged
    assert ids(rated="rated", raters="people") == every
    assert ids(rated="unrated", raters="people") == []
    assert ids(rated="rated") == every and ids(rated="unrated") == []
    # The sort by ratings counts the chosen raters' ratings: the judged items first.
    by_machine = ids(sort="ratings", descending=True, raters="machine")
    assert set(by_machine[: len(judged.judged)]) == set(judged.judged)
    with pytest.raises(ValueError, match="raters must be one of"):
        ids(rated="rated", raters="robots")


def test_rows_count_machine_ratings_apart_and_the_mean_stays_human(judged, conn) -> None:
    dimension = conn.execute("SELECT id FROM dimension WHERE name = 'meaning'").fetchone()[0]
    every = judged.judged + judged.unjudged
    rows = fetch_rows(conn, every, dimension)
    labels = _csmd_labels(len(every))  # the published labels are the human scores
    for item, label in zip(every, labels, strict=True):
        machine = 1 if item in judged.judged else 0
        assert (rows[item].n_ratings, rows[item].n_machine) == (1 + machine, machine)
        assert rows[item].mean_rating == pytest.approx(label)


def test_the_status_counts_say_the_machine_ratings_apart(judged) -> None:
    from meaningbench.db.study import open_study
    from meaningbench.queries.study import study_counts

    every = len(judged.judged) + len(judged.unjudged)
    with open_study(judged.path) as study:
        counts = study_counts(study)
    assert counts.ratings == every + len(judged.judged)
    assert counts.machine_ratings == len(judged.judged)
    assert f"{every} ratings + {len(judged.judged)} ⚙ machine" in counts.summary()
