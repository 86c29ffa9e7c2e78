"""The Which metric tab's human rows, its wmt25 preset, and its ranking job: a window that
stays responsive while it runs, and a cancel that leaves the previous figures; on real
study files, offscreen."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer

from meaningbench.analysis.metaeval_humans import ONE_RATER_LABEL, human_baseline
from meaningbench.analysis.metaeval_presets import WMT25
from meaningbench.analysis.metaeval_significance import rank_metrics
from meaningbench.analysis.metaeval_study import metaeval_data_from_study
from meaningbench.db.study import open_study
from tests.analysis.studybuild import add_ratings
from tests.ui.dashboard.studies import synthetic_study


def _open(open_page, path: Path, qtbot):  # noqa: ANN001, ANN202
    page = open_page(path)
    tab = page.which_metric
    page.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.result is not None and not tab.computing, timeout=60_000)
    return tab


def _rows(tab) -> dict[str, tuple[str, list[str]]]:  # noqa: ANN001
    t = tab.ranking
    return {
        t.item(r, 1).text(): (t.row_kinds[r], [t.item(r, c).text() for c in range(5)])
        for r in range(t.rowCount())
        if t.row_kinds[r] != "note"
    }


def test_each_rater_and_the_one_rater_row_are_marked_and_each_metric_has_its_gap(
    open_page, synth, qtbot
) -> None:
    path, facts = synth
    tab = _open(open_page, path, qtbot)
    with open_study(path) as s:
        data = metaeval_data_from_study(s)
    options = tab.result.options
    base = human_baseline(data, options.measure, options.group_by)
    assert base.one_rater is not None
    rows = _rows(tab)
    humans = {name for name, (kind, _) in rows.items() if kind == "human"}
    assert humans == {f"human: rater {r}" for r in facts.raters} | {ONE_RATER_LABEL}
    for h in base.rows:
        kind, cells = rows[h.label]
        assert cells[0] == "" and cells[2] == f"{h.value:.3f}" and cells[4] == ""
    for r in range(tab.ranking.rowCount()):
        human = tab.ranking.row_kinds[r] == "human"
        assert tab.ranking.item(r, 1).font().italic() == human
    ranking = tab.result.ranking
    for m in ranking.order:
        assert rows[m][0] == "metric"
        assert rows[m][1][4] == f"{ranking.values[m] - base.one_rater:+.3f}"
    assert "one more human" in tab.ranking.horizontalHeaderItem(4).toolTip()
    # The CSV holds them too, marked.
    frame = tab.result.ranking_frame()
    assert set(frame.loc[frame["kind"] == "human", "metric"]) == humans


def test_a_study_of_aggregate_labels_says_why_there_is_no_human_row(
    open_page, tmp_path, qtbot
) -> None:
    study, facts = synthetic_study(tmp_path / "agg.mbstudy", n_items=40, n_metrics=3, n_raters=0)
    add_ratings(study, "published", {i: float(i % 90) for i in facts.item_ids}, kind="aggregate")
    path = study.path
    study.close()
    tab = _open(open_page, path, qtbot)
    assert tab.result.ranking is not None
    assert tab.ranking.row_kinds.count("metric") == 3 and "human" not in tab.ranking.row_kinds
    last = tab.ranking.rowCount() - 1
    assert tab.ranking.row_kinds[last] == "note"
    note = tab.ranking.item(last, 1).text()
    assert note == "No human row: the study has no per-rater ratings (only aggregate labels)"
    assert tab.ranking.columnSpan(last, 1) == 4
    # The note spans the columns without widening the cluster column to its length.
    assert tab.ranking.columnWidth(0) < tab.ranking.fontMetrics().horizontalAdvance(note) / 3
    assert _rows(tab)["metric00"][1][4] == "" and tab.ranking.isColumnHidden(4)  # no gap


def test_the_wmt25_preset_sets_its_task_from_the_engine_and_ranks_as_it_does(
    open_page, synth, qtbot
) -> None:
    path, _ = synth
    tab = _open(open_page, path, qtbot)
    tab.preset.setCurrentIndex(tab.preset.findData("wmt25"))
    task = WMT25.segment_task
    assert (tab.measure.currentData(), tab.grouping.currentData(), tab.test.currentData()) == (
        task.measure,
        task.group_by,
        task.test,
    )
    qtbot.waitUntil(
        lambda: tab.result.options.preset == "wmt25" and not tab.computing, timeout=60_000
    )
    ranking = tab.result.ranking
    with open_study(path) as s:
        data = metaeval_data_from_study(s)
    engine = rank_metrics(
        data,
        task.measure,
        group_by=task.group_by,
        test=task.test,
        intervals=WMT25.intervals,
        early_stop=WMT25.early_stop,
    )
    assert ranking.early_stop == WMT25.early_stop and ranking.draws is not None
    assert ranking.order == engine.order and ranking.values == pytest.approx(engine.values)
    assert ranking.p_values.equals(engine.p_values)
    assert "WMT25" in tab.status.text() and "early stopping" in tab.status.text()
    assert tab.result.humans is not None and tab.result.humans.measure == "acc_eq_star"
    assert "human" in tab.ranking.row_kinds
    # A measure of the user's own leaves the preset, and its early stopping.
    tab.measure.setCurrentIndex(tab.measure.findData("kendall_b"))
    assert tab.preset.currentData() == ""
    qtbot.waitUntil(
        lambda: tab.result.options.measure == "kendall_b" and not tab.computing, timeout=60_000
    )
    assert tab.result.options.preset is None and tab.result.ranking.early_stop is None


@pytest.fixture
def larger(tmp_path: Path) -> Path:
    """120 outputs: acc*_eq per source with PERM-BOTH and its intervals takes a while."""
    study, _ = synthetic_study(tmp_path / "larger.mbstudy", n_items=120, n_metrics=4, n_raters=3)
    path = study.path
    study.close()
    return path


def _slow_options(tab) -> None:  # noqa: ANN001
    tab.grouping.setCurrentIndex(tab.grouping.findData("item"))
    tab.measure.setCurrentIndex(tab.measure.findData("acc_eq_star"))


def test_the_window_handles_events_while_the_ranking_job_runs(open_page, larger, qtbot) -> None:
    tab = _open(open_page, larger, qtbot)
    ticks: list[tuple[float, bool]] = []
    ticker = QTimer()
    ticker.setInterval(10)
    ticker.timeout.connect(lambda: ticks.append((time.monotonic(), tab.computing)))
    ticker.start()
    _slow_options(tab)
    qtbot.waitUntil(lambda: tab.computing, timeout=10_000)
    started = time.monotonic()
    qtbot.waitUntil(
        lambda: not tab.computing and tab.result.options.measure == "acc_eq_star", timeout=60_000
    )
    took = time.monotonic() - started
    ticker.stop()
    during = [t for t, computing in ticks if computing]
    assert len(during) >= 3, (took, len(during))
    gaps = [b - a for a, b in zip(during, during[1:], strict=False)]
    # Never frozen a second (0.2 s at most here, with the CPUs shared with the worker).
    assert max(gaps, default=0.0) < 1.0, (took, max(gaps))
    assert tab.result.ranking is not None and tab.result.ranking.measure == "acc_eq_star"


def test_cancel_leaves_the_previous_ranking(open_page, larger, qtbot) -> None:
    tab = _open(open_page, larger, qtbot)
    before = tab.result
    shown = _rows(tab)
    _slow_options(tab)
    qtbot.waitUntil(lambda: tab.computing, timeout=10_000)
    handle = tab.job
    assert handle is not None
    handle.cancel()  # what the status bar's job panel does
    qtbot.waitUntil(lambda: not handle.running, timeout=60_000)
    qtbot.waitUntil(lambda: not tab.computing, timeout=60_000)
    assert handle.outcome == "cancelled"
    assert tab.result is before and before.options.measure == "pearson"
    assert _rows(tab) == shown
    assert "computing" not in tab.status.text()
