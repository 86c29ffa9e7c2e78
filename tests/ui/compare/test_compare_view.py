"""The comparison view lists every system of a source with the study's own numbers."""

from __future__ import annotations

import statistics

import pytest
from PySide6.QtCore import Qt

from meaningbench.core.keys import source_group_key
from meaningbench.metrics.names import metric_canonical_name
from meaningbench.queries.word_diff import diff_html, inline_diff
from meaningbench.ui.compare import ComparePage, CompareView
from meaningbench.ui.compare.systems_model import HTML_ROLE, ITEM_ID_ROLE, SORT_ROLE
from tests.ui.compare import studies
from tests.ui.compare.studies import (
    COMMITTEE,
    COMMITTEE_OUTPUTS,
    COMMITTEE_RATINGS,
    STORM,
    STORM_OUTPUTS,
    STORM_RATINGS,
    STORM_REFS,
    DemoStudy,
)

# hand-chosen metric values per system, stored as two metric runs
BLEU = {"Splitter": 39.3, "Copy": 48.8, "Truncator": 8.9, "Paraphraser": 41.2, "Hallucinator": 6.7}
SIM = {"Splitter": 94.8, "Copy": 100.0, "Truncator": 72.1, "Paraphraser": 94.8}  # one missing


@pytest.fixture
def demo(new_study) -> DemoStudy:
    d = DemoStudy(new_study)
    studies.add_source(
        d,
        STORM,
        STORM_OUTPUTS,
        STORM_RATINGS,
        STORM_REFS,
        aggregate={"Copy": 97.0, "Truncator": 41.0},
    )
    studies.add_source(d, COMMITTEE, COMMITTEE_OUTPUTS, COMMITTEE_RATINGS)
    studies.store_values(new_study, "bleu", {d.items[(STORM, k)]: v for k, v in BLEU.items()})
    studies.store_values(
        new_study, "sbert_cosine", {d.items[(STORM, k)]: v for k, v in SIM.items()}
    )
    return d


def _table(view: CompareView) -> dict[str, dict[str, str]]:
    """What the table shows: system -> column title -> displayed text."""
    out = {}
    for r in range(view.proxy.rowCount()):
        cells = {
            view.proxy.headerData(c, Qt.Orientation.Horizontal): view.proxy.index(r, c).data()
            for c in range(view.proxy.columnCount())
        }
        out[cells["System"]] = cells
    return out


def test_every_system_with_its_ratings_and_metric_values(qtbot, demo: DemoStudy) -> None:
    view = CompareView(demo.study)
    qtbot.addWidget(view)
    view.show_source_group(source_group_key(STORM))
    table = _table(view)
    assert set(table) == set(STORM_OUTPUTS)
    for system, ratings in STORM_RATINGS.items():
        row = table[system]
        for rater, value in ratings.items():
            assert row[rater] == f"{value:.1f}"
        assert row["Mean meaning"] == f"{statistics.fmean(ratings.values()):.1f}"
        assert row["bleu[refs=source]"] == f"{BLEU[system]:.1f}"
        assert row["sbert_cosine"] == (f"{SIM[system]:.1f}" if system in SIM else "—")
        assert row["Output (word diff against the source)"] == STORM_OUTPUTS[system]
    # the published aggregate label is its own column, not part of the raters' mean
    assert table["Copy"]["published mean"] == "97.0"
    assert table["Splitter"]["published mean"] == "—"
    # the word diff against the source is what the output cell draws
    rows = range(view.proxy.rowCount())
    truncator = next(r for r in rows if view.proxy.index(r, 0).data() == "Truncator")
    html = view.proxy.index(truncator, 1).data(HTML_ROLE)
    assert html == diff_html(inline_diff(STORM, STORM_OUTPUTS["Truncator"]))


def test_sorting_by_a_metric_orders_rows_and_keeps_missing_last(qtbot, demo: DemoStudy) -> None:
    view = CompareView(demo.study)
    qtbot.addWidget(view)
    col = next(i for i, c in enumerate(view.model.columns) if c.title == "sbert_cosine")
    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
        view.table.sortByColumn(col, order)
        systems = [view.proxy.index(r, 0).data() for r in range(view.proxy.rowCount())]
        values = [view.proxy.index(r, col).data(SORT_ROLE) for r in range(view.proxy.rowCount())]
        assert systems[-1] == "Hallucinator"  # no value: last either way
        present = values[:-1]
        assert present == sorted(present, reverse=order == Qt.SortOrder.DescendingOrder)


def test_show_item_navigates_to_its_source_and_selects_it(qtbot, demo: DemoStudy) -> None:
    view = CompareView(demo.study)
    qtbot.addWidget(view)
    target = demo.items[(COMMITTEE, "Truncator")]
    with qtbot.waitSignal(view.source_changed):
        view.show_item(target)
    assert view.current_item_id() == target
    assert set(_table(view)) == set(COMMITTEE_OUTPUTS)
    assert view.source_text.text() == COMMITTEE
    assert view.position_label.text() == "2 of 2"
    view.step(1)  # wraps around to the first source
    assert view.source_text.text() == STORM
    view.select_item(demo.items[(STORM, "Copy")])
    index = view.table.selectionModel().currentIndex()
    assert index.data(ITEM_ID_ROLE) == demo.items[(STORM, "Copy")]


def test_detail_tabs_follow_the_selected_output(qtbot, demo: DemoStudy) -> None:
    from meaningbench.metrics.explain import NgramMatches, NoExplanation
    from meaningbench.metrics.lexical.sari import SariExplanation, explain_sari
    from meaningbench.ui.compare.page import TAB_EXPLAIN, TAB_SCENES

    view = CompareView(demo.study)
    qtbot.addWidget(view)
    view.show_item(demo.items[(STORM, "Paraphraser")])
    view.tabs.setCurrentIndex(TAB_EXPLAIN)
    explain = view.explain
    # the stored runs of this output first, then what explains from the texts alone
    labels = [explain.runs.itemText(i) for i in range(explain.runs.count())]
    assert labels[:2] == ["bleu", "sbert_cosine"]
    assert "SARI (computed here)" in labels and "SAMSA (computed here)" in labels
    explain.choose("sari")
    body = explain.explanation.body
    assert isinstance(body, SariExplanation)
    # no stored SARI run: the metric's defaults, i.e. the source as the reference
    assert body == explain_sari(STORM, STORM_OUTPUTS["Paraphraser"], [STORM])
    assert explain.stack.currentWidget() is explain.sari
    assert "source mode" in explain.sari.browser.toPlainText()
    # the choice stays while browsing outputs
    view.select_item(demo.items[(STORM, "Copy")])
    assert explain.explanation.body == explain_sari(STORM, STORM_OUTPUTS["Copy"], [STORM])
    explain.choose("bleu")
    assert isinstance(explain.explanation.body, NgramMatches)
    assert explain.stack.currentWidget() is explain.ngrams
    assert "found in a reference" in explain.ngrams.toPlainText()
    # a stored score whose metric has no parts to show says so
    explain.choose("sbert_cosine")
    assert isinstance(explain.explanation.body, NoExplanation)
    assert "has no explanation view" in explain.message.toPlainText()

    view.select_item(demo.items[(STORM, "Paraphraser")])
    view.tabs.setCurrentIndex(TAB_SCENES)
    assert view.scene_preview.details is None  # no scenes yet
    # draw one scene in the editor: SAMSA previews it live for the selected output
    editor = view.scene_editor
    editor.add_scene()
    editor.toggle_token(editor.tokens.index("repaired"))
    assert view.scene_preview.details is not None
    assert view.scene_preview.details["n_scenes"] == 1
    assert view.scene_preview.details["scenes"][0]["main_relation"]["found"] is False  # "fixed"


def test_page_follows_the_study_context(qtbot, demo: DemoStudy) -> None:
    from meaningbench.ui.context import StudyContext

    ctx = StudyContext()
    page = ComparePage(ctx)
    qtbot.addWidget(page)
    assert page.view.comparison is None
    ctx.study_opened.emit(demo.study)
    assert page.view.comparison is not None and page.view.comparison.source == STORM
    page.show_item(demo.items[(COMMITTEE, "Copy")])
    assert page.view.current_item_id() == demo.items[(COMMITTEE, "Copy")]
    ctx.study_closed.emit()
    assert page.view.comparison is None


def test_new_data_keeps_the_current_source(qtbot, demo: DemoStudy) -> None:
    view = CompareView(demo.study)
    qtbot.addWidget(view)
    view.show_item(demo.items[(COMMITTEE, "Copy")])
    studies.add_source(demo, "A third source sentence.", {"Copy": "A third source sentence."}, {})
    view.reload_sources()
    assert view.source_text.text() == COMMITTEE
    assert view.current_item_id() == demo.items[(COMMITTEE, "Copy")]
    assert view.position_label.text() == "2 of 3"


def test_explain_tab_draws_the_stored_bertscore_alignment(qtbot, demo: DemoStudy) -> None:
    from meaningbench.metrics.neural.support.token_matching import from_bertscore_details
    from meaningbench.metrics.registry import create_metric
    from meaningbench.ui.compare.page import TAB_EXPLAIN

    metric = create_metric("bertscore")
    pairs = demo.pairs(STORM)
    scores = metric.score_batch(pairs)
    studies.store_scores(demo.study, metric, pairs, scores)
    view = CompareView(demo.study)
    qtbot.addWidget(view)
    target = demo.items[(STORM, "Paraphraser")]
    view.show_item(target)
    view.tabs.setCurrentIndex(TAB_EXPLAIN)
    view.explain.choose(metric_canonical_name(metric))
    stored = next(s for p, s in zip(pairs, scores, strict=True) if p.item_id == target)
    matching = view.explain.matching
    assert matching.alignment == from_bertscore_details(stored.details)
    assert matching.ref_label == "source"
    assert view.explain.runs.currentText() == metric_canonical_name(metric)
    assert view.explain.stack.currentWidget() is view.explain.matching_scroll
    assert "F1" in view.explain.note.text()


def test_a_plugin_metric_is_explained_by_its_own_hook(qtbot, demo: DemoStudy) -> None:
    from typing import Any, ClassVar

    from meaningbench.metrics.base import ItemScore, Metric, MetricInfo
    from meaningbench.metrics.explain import Explanation, NgramMatches, ngram_matches
    from meaningbench.metrics.registry import register, unregister
    from meaningbench.ui.compare.page import TAB_EXPLAIN

    class Shouting(Metric):
        info: ClassVar[MetricInfo] = MetricInfo("shouting", "Shouting", "lexical", "caps")
        defaults: ClassVar[dict[str, Any]] = {}

        def score_batch(self, pairs: Any, cancel: Any = None) -> list[ItemScore]:
            return [ItemScore(100.0 * p.output.isupper(), float(p.output.isupper())) for p in pairs]

        def explain(self, item: Any) -> Explanation:
            found = ngram_matches(item.pair.output, [item.pair.source], str.split, max_n=1)
            return Explanation(found, f"stored value {item.value}")

    register(Shouting)
    try:
        pairs = demo.pairs(STORM)
        metric = Shouting()
        studies.store_scores(demo.study, metric, pairs, metric.score_batch(pairs))
        view = CompareView(demo.study)
        qtbot.addWidget(view)
        view.show_item(demo.items[(STORM, "Copy")])
        view.tabs.setCurrentIndex(TAB_EXPLAIN)
        view.explain.choose("shouting")
        assert view.explain.runs.currentText() == "shouting"
        body = view.explain.explanation.body
        assert isinstance(body, NgramMatches)
        assert body.orders[0].output_only == ()  # the copy keeps every word of the source
        assert view.explain.note.text() == "stored value 0.0"
    finally:
        unregister("shouting")
