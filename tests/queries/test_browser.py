"""The browser's queries on a real study file, checked against what the test wrote into it
and against the engine's rules (`meaningbench.analysis.human`, the score columns)."""

from __future__ import annotations

import pytest

from meaningbench.analysis.human import item_scores
from meaningbench.analysis.score_columns import score_matrix
from meaningbench.db.frames import ratings_frame
from meaningbench.queries.browser import (
    BrowserFilter,
    BrowserReader,
    distinct_values,
    fetch_rows,
    fetch_scores,
    load_ids,
    primary_dimension,
    score_columns,
)
from meaningbench.queries.item_detail import fetch_detail
from tests.ui.factories import add_scores

HASH = "h" * 16


def test_filters_select_the_items_written_so(study_with_facts, conn) -> None:
    _study, facts = study_with_facts
    everything = list(load_ids(conn, BrowserFilter(kinds="all")))
    assert everything == sorted(facts.item_ids + facts.control_ids)
    assert list(load_ids(conn, BrowserFilter(kinds="control"))) == facts.control_ids
    assert list(load_ids(conn, BrowserFilter(rated="rated"))) == sorted(facts.rated)
    unrated = [i for i in facts.item_ids if i not in facts.rated]
    assert list(load_ids(conn, BrowserFilter(rated="unrated"))) == unrated
    assert list(load_ids(conn, BrowserFilter(flagged=True))) == sorted(facts.flagged)
    beta = [i for i in facts.item_ids if facts.dataset_of[i] == "beta"]
    assert list(load_ids(conn, BrowserFilter(dataset="beta"))) == beta
    needle = [i for i in facts.item_ids if "needle" in facts.text_of[i][1]]
    assert list(load_ids(conn, BrowserFilter(search="NEEDLE"))) == needle
    assert list(load_ids(conn, BrowserFilter(search="100%"))) == []  # a literal %, no wildcard
    newest_first = list(load_ids(conn, BrowserFilter(descending=True)))
    assert newest_first == sorted(facts.item_ids, reverse=True)


def test_rows_carry_the_human_score_of_the_one_rule(study_with_facts, conn) -> None:
    study, facts = study_with_facts
    dimension = primary_dimension(conn)
    assert dimension is not None and dimension[1] == "meaning"
    rows = fetch_rows(conn, facts.item_ids, dimension[0])
    with study.session() as s:
        ratings = ratings_frame(s, dimension="meaning", kinds=("regular",))
    rule = item_scores(ratings).set_index("item_id")["score"]
    for item_id in facts.item_ids:
        row = rows[item_id]
        assert (row.source, row.output) == facts.text_of[item_id]
        assert row.dataset == facts.dataset_of[item_id]
        assert row.n_ratings == len(facts.ratings.get(item_id, []))
        assert row.flagged == (item_id in facts.flagged)
        if item_id in rule.index:
            assert row.mean_rating == pytest.approx(rule[item_id])
        else:
            assert row.mean_rating is None


def test_sort_by_mean_and_by_score_order_by_those_values(study_with_facts, conn) -> None:
    _study, facts = study_with_facts
    dim = primary_dimension(conn)
    assert dim is not None
    by_mean = list(load_ids(conn, BrowserFilter(sort="mean", sort_dimension=dim[0])))
    means = fetch_rows(conn, by_mean, dim[0])
    scored = [means[i].mean_rating for i in by_mean if means[i].mean_rating is not None]
    assert scored == sorted(scored) and len(scored) == len(facts.rated)
    assert all(means[i].mean_rating is None for i in by_mean[len(scored) :])  # unrated last

    by_bleu = list(load_ids(conn, BrowserFilter(sort="score", sort_score=("bleu", HASH))))
    values = [facts.bleu[i] for i in by_bleu if i in facts.bleu]
    assert values == sorted(values)
    assert by_bleu[len(values) :] == [i for i in facts.item_ids if i not in facts.bleu]


def test_scores_are_the_newest_without_errors(study_with_facts, conn) -> None:
    study, facts = study_with_facts
    scores = fetch_scores(conn, facts.item_ids)
    for item_id in facts.item_ids:
        assert scores.get((item_id, "bleu", HASH)) == facts.bleu.get(item_id)
    first = facts.item_ids[0]
    add_scores(study.path, "bleu", {first: 1.5}, config_hash=HASH)  # a re-run of one item
    newer = fetch_scores(conn, facts.item_ids)
    assert newer[(first, "bleu", HASH)] == 1.5
    assert newer[(facts.item_ids[1], "bleu", HASH)] == facts.bleu[facts.item_ids[1]]


def test_score_columns_and_filter_choices(study_with_facts, conn) -> None:
    study, facts = study_with_facts
    columns = score_columns(study)
    # BLEU with its default options: the spec as `meaningbench.metrics.names` prints it,
    # the same name the score table and the exports give the column.
    assert [(c.metric, c.config_hash, c.column) for c in columns] == [
        ("bleu", HASH, "bleu[refs=source]")
    ]
    with study.session() as s:
        assert list(score_matrix(s).columns) == [c.column for c in columns]
    datasets, systems = distinct_values(conn)
    assert datasets == ["alpha", "beta"]
    assert systems == sorted(set(facts.system_of.values()))


def test_detail_shows_ratings_scores_and_notes(study_with_facts, conn) -> None:
    _study, facts = study_with_facts
    failed = facts.item_ids[5]  # populated_study's failed BLEU item
    detail = fetch_detail(conn, failed)
    assert detail is not None
    assert (detail.source, detail.output) == facts.text_of[failed]
    assert [s.error for s in detail.scores] == ["boom"]  # a failure stays visible
    noted = fetch_detail(conn, facts.item_ids[2])
    assert noted is not None and [n.comment for n in noted.notes] == ["check this"]
    rated = next(i for i in facts.item_ids if len(facts.ratings.get(i, [])) == 2)
    shown = fetch_detail(conn, rated)
    assert shown is not None
    assert sorted((r.annotator, r.value) for r in shown.ratings) == sorted(facts.ratings[rated])
    assert fetch_detail(conn, 10**9) is None


def test_a_newer_not_defined_score_replaces_an_older_value_everywhere(
    study_with_facts, conn
) -> None:
    """The rule of which score counts is one SQL text (meaningbench.db.frames): a newer run
    that stored "not defined" (no value, no error) hides the older value in the browser, the
    score matrix and the comparison view alike."""
    from meaningbench.queries.compare import list_sources, load_comparison

    study, facts = study_with_facts
    first = next(iter(facts.bleu))
    add_scores(study.path, "bleu", {first: None}, config_hash=HASH)  # type: ignore[dict-item]
    assert fetch_scores(conn, [first])[(first, "bleu", HASH)] is None
    with study.session() as s:
        matrix = score_matrix(s)
        shown = {
            row.item_id: row.metrics
            for entry in list_sources(s)
            for row in load_comparison(s, entry.source_group).rows
        }
    column = next(c for c in matrix.columns if c.startswith("bleu"))
    assert matrix[column].isna()[first]
    assert not any(name.startswith("bleu") for name in shown.get(first, {}))
    other = next(i for i in facts.bleu if i != first)
    assert fetch_scores(conn, [other])[(other, "bleu", HASH)] == facts.bleu[other]


def test_the_reader_answers_as_the_queries_and_keeps_its_connection(study_with_facts, conn) -> None:
    study, facts = study_with_facts
    reader = BrowserReader(str(study.path))
    everything = BrowserFilter(kinds="all")
    assert list(reader.ids(everything)) == list(load_ids(conn, everything))
    dimension = reader.primary_dimension()
    assert dimension is not None and dimension == primary_dimension(conn)
    assert reader.rows(facts.item_ids, dimension[0]) == fetch_rows(
        conn, facts.item_ids, dimension[0]
    )
    assert reader.scores(facts.item_ids) == fetch_scores(conn, facts.item_ids)
    assert reader.filter_values() == distinct_values(conn)
    assert reader.has_items()
    first = facts.item_ids[0]
    assert reader.detail(first) == fetch_detail(conn, first)
    reader.close()
    with pytest.raises(RuntimeError, match="closed"):
        reader.ids(everything)
