"""The dashboard's "Which metric" tab: the engine's ranking, p-values and per-category
values on a real study file, recomputed in a worker as ratings arrive."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer

from meaningbench.analysis.metaeval import evaluate
from meaningbench.analysis.metaeval_significance import rank_metrics
from meaningbench.analysis.metaeval_study import metaeval_data_from_study
from meaningbench.annotation.session import AnnotationSession
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import open_study
from meaningbench.queries.which_metric import compute_which_metric, p_text
from meaningbench.runtime.changes import StudyChanges
from tests.ui.dashboard.studies import Synthetic, synthetic_study

TYPES = ("paraphrase", "splitting", "deletion")


@pytest.fixture
def categorised(tmp_path: Path) -> tuple[Path, Synthetic]:
    """A synthetic study (a third of the items unrated) whose items got a sentence type
    from a second file, as a user would add one."""
    study, facts = synthetic_study(
        tmp_path / "cat.mbstudy", n_items=60, n_metrics=4, n_raters=3, rated_share=0.3
    )
    types = tmp_path / "types.csv"
    with types.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["source", "output", "system", "sentence_type"])
        for k, item_id in enumerate(facts.item_ids):
            system = f"system-{k % 4}"
            w.writerow([facts.sources[item_id], facts.outputs[item_id], system, TYPES[k % 3]])
    report = import_file(study, types, dataset="synthetic")
    assert report.items_given_attributes == len(facts.item_ids)
    path = study.path
    study.close()
    return path, facts


def _wait_result(qtbot, tab, timeout: int = 60_000) -> None:  # noqa: ANN001
    qtbot.waitUntil(
        lambda: tab.result is not None and not tab.computing and tab.result.by is not None,
        timeout=timeout,
    )


def _engine(path: Path, options):  # noqa: ANN001, ANN202
    with open_study(path) as study:
        data = metaeval_data_from_study(study, options.dimension)
    ranking = rank_metrics(
        data,
        options.measure,
        group_by=options.group_by,
        test=options.test,
        resamples=options.resamples,
        seed=options.seed,
        alpha=options.alpha,
    )
    table = evaluate(data, [options.measure], group_by=options.group_by, by=options.by)
    return data, ranking, table


def test_the_tab_shows_the_engines_ranking_p_values_and_categories(
    open_page, categorised, qtbot
) -> None:
    path, facts = categorised
    page = open_page(path)
    tab = page.which_metric
    page.tabs.setCurrentWidget(tab)
    _wait_result(qtbot, tab)
    options = tab.result.options
    assert options.by == "sentence_type" and tab.attribute.currentData() == "sentence_type"
    data, ranking, table = _engine(path, options)
    assert tab.result.n_outputs == int(data.common().sum())
    # The ranking table: the engine's order, clusters, values and intervals.
    rows = [r for r, kind in enumerate(tab.ranking.row_kinds) if kind == "metric"]
    assert len(rows) == len(facts.metric_names)
    for r, metric in zip(rows, ranking.order, strict=True):
        assert tab.ranking.item(r, 1).text() == metric
        assert tab.ranking.item(r, 0).text() == str(ranking.clusters[metric])
        assert tab.ranking.item(r, 2).text() == f"{ranking.values[metric]:.3f}"
        lo, hi = ranking.intervals[metric]
        assert tab.ranking.item(r, 3).text() == f"[{lo:.3f}, {hi:.3f}]"
    # The p-value matrix, in ranking order, shaded where p <= alpha.
    for i, a in enumerate(ranking.order):
        for j, b in enumerate(ranking.order):
            cell = tab.pvalues.item(i, j).text()
            if i == j:
                assert cell == ""
                continue
            p = float(ranking.p_values.loc[a, b])
            assert cell == p_text(p, options.resamples)  # "< 0.001" below 1 / resamples
            shaded = tab.pvalues.item(i, j).background().style() != Qt.BrushStyle.NoBrush
            assert shaded == (p <= options.alpha)
    # The bars: every category's value of every metric, as the engine gives them.
    expected: dict[str, dict[str, float]] = {}
    for v in table.values:
        if v.value is not None:
            expected.setdefault(v.category or "all outputs", {})[v.metric] = v.value
    assert set(expected) == {"all outputs", *TYPES}
    assert tab.bars.drawn.keys() == expected.keys()
    for category, values in expected.items():
        assert tab.bars.drawn[category] == pytest.approx(values, abs=1e-12)
    assert tab.bars_panel.showing_message is False


def test_ratings_that_arrive_are_ranked_again_in_a_worker(open_page, categorised, qtbot) -> None:
    path, facts = categorised
    page = open_page(path)
    tab = page.which_metric
    page.tabs.setCurrentWidget(tab)
    _wait_result(qtbot, tab)
    before = tab.result.n_outputs
    study = page.context.study
    with open_study(path) as s:
        rated = metaeval_data_from_study(s).common()
    unrated = [i for i, ok in zip(facts.item_ids, rated, strict=True) if not ok][:5]
    assert len(unrated) == 5
    session = AnnotationSession(study, "newcomer")
    for item_id in unrated:
        session.submit(item_id, {"meaning": 50.0})
    # A timer on the GUI thread keeps firing while the ranking is computed: the
    # computation is not on the GUI thread.
    seen_while_computing: list[bool] = []
    ticker = QTimer()
    ticker.setInterval(5)
    ticker.timeout.connect(lambda: seen_while_computing.append(tab.computing))
    ticker.start()
    page.context.runner.broadcast(StudyChanges.of(ratings=unrated))
    qtbot.waitUntil(lambda: tab.computing, timeout=20_000)
    assert "computing…" in tab.status.text()
    qtbot.waitUntil(
        lambda: not tab.computing and tab.result.n_outputs == before + 5, timeout=60_000
    )
    ticker.stop()
    assert any(seen_while_computing)
    assert "computing…" not in tab.status.text()
    assert f"{before + 5:,} outputs" in tab.status.text()
    expected = compute_which_metric(path, tab.result.options)
    assert tab.result.ranking.order == expected.ranking.order
    assert tab.result.ranking.values == pytest.approx(expected.ranking.values)


def test_options_recompute_and_a_study_without_metrics_says_why(
    open_page, categorised, tmp_path, qtbot
) -> None:
    path, _facts = categorised
    page = open_page(path)
    tab = page.which_metric
    page.tabs.setCurrentWidget(tab)
    _wait_result(qtbot, tab)
    tab.measure.setCurrentIndex(tab.measure.findData("acc_eq_star"))
    qtbot.waitUntil(
        lambda: tab.result.options.measure == "acc_eq_star" and not tab.computing, timeout=60_000
    )
    _data, ranking, _table = _engine(path, tab.result.options)
    assert tab.result.ranking.order == ranking.order
    metric_rows = [r for r, kind in enumerate(tab.ranking.row_kinds) if kind == "metric"]
    assert [tab.ranking.item(r, 1).text() for r in metric_rows] == ranking.order
    assert np.isfinite([ranking.values[m] for m in ranking.order]).all()

    bare = tmp_path / "bare.csv"
    bare.write_text("source,output,annotator,meaning\nA b c.,A b.,r1,50\nD e f.,D e.,r1,60\n")
    empty_path = tmp_path / "bare.mbstudy"
    from meaningbench.db.study import create_study

    with create_study(empty_path) as study:
        import_file(study, bare)
    other = open_page(empty_path)
    other.tabs.setCurrentWidget(other.which_metric)
    qtbot.waitUntil(lambda: other.which_metric.result is not None, timeout=30_000)
    assert other.which_metric.ranking_panel.showing_message
    assert "No metric runs yet" in other.which_metric.ranking_panel.message.text()
