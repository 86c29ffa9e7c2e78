"""Live updates: a submitted rating reaches the dashboard, coalesced, without a reload."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from meaningbench.analysis.live import StudyAnalysis, correlation_table
from meaningbench.annotation.session import AnnotationSession
from meaningbench.runtime.changes import StudyChanges
from meaningbench.ui.dashboard import controller as controller_module
from tests.ui.dashboard.conftest import wait_ready


def _fresh(study, **kwargs):  # noqa: ANN001, ANN202
    return correlation_table(study, n_boot=0, **kwargs)


def _rate(study, name: str, values: dict[int, float]) -> None:  # noqa: ANN001
    """Submit ratings the way the rating screen does: through the annotation engine."""
    session = AnnotationSession(study, name)
    for item_id, value in values.items():
        session.submit(item_id, {"meaning": value})


def test_a_submitted_rating_updates_the_dashboard(open_page, synth, qtbot) -> None:
    path, facts = synth
    page = open_page(path)
    c = page.controller
    study = page.context.study
    before = dict(page.correlations.bars.values())
    loads = []
    c.loaded.connect(lambda: loads.append(1))
    # A new annotator gives extreme ratings to a few items: correlations must move.
    targets = facts.item_ids[:6]
    _rate(study, "newcomer", {i: (0.0 if k % 2 else 100.0) for k, i in enumerate(targets)})
    with qtbot.waitSignal(c.live_changed, timeout=5000):
        page.context.runner.broadcast(StudyChanges.of(ratings=targets))
    expected = _fresh(study)
    after = page.correlations.bars.values()
    for name, value in after.items():
        assert value == pytest.approx(expected.results[name].pearson, abs=1e-12)
    assert after != before
    assert not loads, "one rating must not reload the study"
    # The intervals follow in the background, for the data as it is now.
    wait_ready(qtbot, page)
    boot = correlation_table(study, n_boot=1000, seed=0)
    series = page.correlations.series
    for k, name in enumerate(series.names):
        assert series.lows[k] == pytest.approx(boot.results[name].pearson_ci[0], abs=1e-12)
    assert "newcomer" in page.quality.loo.frame.index


def test_notifications_are_coalesced(open_page, synth, qtbot) -> None:
    path, facts = synth
    page = open_page(path)
    c = page.controller
    flushes = []
    c.live_changed.connect(lambda: flushes.append(c.version))
    study = page.context.study
    for k, item_id in enumerate(facts.item_ids[:5]):
        _rate(study, "burst", {item_id: 10.0 * k})
        page.context.runner.broadcast(StudyChanges.of(ratings=[item_id]))
    qtbot.wait(controller_module.RATING_COALESCE_MS + 300)
    assert len(flushes) == 1, "five notifications within 250 ms make one refresh"
    expected = _fresh(study)
    for name, value in page.correlations.bars.values().items():
        assert value == pytest.approx(expected.results[name].pearson, abs=1e-12)


def test_revisions_and_withdrawn_ratings_are_reconciled(open_page, synth, qtbot) -> None:
    path, facts = synth
    page = open_page(path)
    study = page.context.study
    item = facts.item_ids[3]
    session = AnnotationSession(study, "reviser")
    session.submit(item, {"meaning": 5.0})
    session.submit(facts.item_ids[4], {"meaning": 95.0})
    session.submit(item, {"meaning": 90.0})  # a revision supersedes the first rating
    session.undo_last()  # and an undo brings the 5.0 back
    page.context.runner.broadcast(StudyChanges.of(ratings=[item, facts.item_ids[4]]))
    qtbot.waitUntil(lambda: not c_pending(page), timeout=5000)
    live = page.controller.state.analysis
    fresh = StudyAnalysis.from_study(study)
    assert _current(live, item) == _current(fresh, item)
    assert ("reviser", 5.0) in _current(live, item)


def c_pending(page) -> bool:  # noqa: ANN001
    return bool(page.controller._pending) or page.controller._rating_timer.isActive()


def _current(analysis: StudyAnalysis, item_id: int) -> set[tuple[str, float]]:
    ratings = analysis.data.ratings
    items, raters, values = ratings.arrays()
    pos = list(ratings.item_ids).index(item_id)
    names = ratings.annotators
    return {(names[a], v) for p, a, v in zip(items, raters, values, strict=True) if p == pos}


def test_the_cheap_path_moves_to_a_worker_when_over_budget(
    open_page, synth, qtbot, monkeypatch
) -> None:
    monkeypatch.setattr(controller_module, "LIVE_BUDGET_MS", -1.0)  # every run is over it
    path, facts = synth
    page = open_page(path)
    c = page.controller
    study = page.context.study
    for k in range(2):
        _rate(study, "slow", {facts.item_ids[k]: 50.0})
        with qtbot.waitSignal(c.live_changed, timeout=5000):
            page.context.runner.broadcast(StudyChanges.of(ratings=[facts.item_ids[k]]))
    assert not c.live_on_gui[False]
    titles = []
    c.runner.job_started.connect(lambda handle: titles.append(handle.title))
    _rate(study, "slow", {facts.item_ids[2]: 0.0})
    page.context.runner.broadcast(StudyChanges.of(ratings=[facts.item_ids[2]]))
    with qtbot.waitSignal(c.live_changed, timeout=5000):
        pass  # the statistics now come from a worker job
    assert "Dashboard statistics" in titles
    wait_ready(qtbot, page)
    expected = _fresh(study)
    for name, value in page.correlations.bars.values().items():
        assert value == pytest.approx(expected.results[name].pearson, abs=1e-12)


def test_score_batches_update_the_table_without_a_reload(open_page, synth, qtbot) -> None:
    from tests.analysis.studybuild import add_scores

    path, facts = synth
    page = open_page(path)
    c = page.controller
    study = page.context.study
    loads, titles = [], []
    c.loaded.connect(lambda: loads.append(1))
    c.runner.job_started.connect(lambda handle: titles.append(handle.title))
    add_scores(study, "late_metric", {i: float(k % 7) for k, i in enumerate(facts.item_ids)})
    with qtbot.waitSignal(c.scores_changed, timeout=10_000):
        page.context.runner.broadcast(StudyChanges.of(scores={"late_metric": facts.item_ids[:50]}))
        page.context.runner.broadcast(StudyChanges.of(scores={"late_metric": facts.item_ids[50:]}))
    expected = _fresh(study)
    bars = page.correlations.bars.values()
    assert set(bars) == set(expected.results) and "late_metric" in bars
    for name, value in bars.items():
        assert value == pytest.approx(expected.results[name].pearson, abs=1e-12)
    shown = page.correlations.stats.frame
    assert "late_metric" in shown.index
    assert shown.loc["late_metric", "pearson"] == pytest.approx(
        expected.results["late_metric"].pearson, abs=1e-12
    )
    assert page.correlations.metric_combo.findData("late_metric") >= 0
    assert not loads and "Dashboard" not in titles, "a batch of scores must not reread the study"
    # The heatmap, drawn when its tab is shown, has the new column.
    page.tabs.setCurrentWidget(page.heat_panel)
    assert "late_metric" in page.heatmap.frame.columns
    wait_ready(qtbot, page)  # the intervals follow for the data as it is now


def test_a_score_run_reaches_the_table_batch_by_batch(open_page, synth, qtbot) -> None:
    """A real battery in a child process: its batches' labels are the dashboard's column
    names, so each batch is read back by its ids and the study is never read whole."""
    from meaningbench.ops.child_process import in_child_process
    from meaningbench.ops.score import score_job

    path, _facts = synth
    page = open_page(path)
    c = page.controller
    loads, batches = [], []
    c.loaded.connect(lambda: loads.append(1))
    c.scores_changed.connect(lambda: batches.append(1))
    handle = page.context.runner.start(
        in_child_process(score_job, Path(path), ["compression"], {"workers": 1}),
        title="Running metrics",
    )
    qtbot.waitUntil(lambda: not handle.running, timeout=180_000)
    assert handle.outcome == "done", handle.failure
    qtbot.waitUntil(lambda: bool(batches) and not c._score_timer.isActive(), timeout=10_000)
    wait_ready(qtbot, page)
    expected = _fresh(page.context.study)
    new = [name for name in expected.results if name.startswith("compression")]
    assert len(new) == 1 and new[0] in page.correlations.bars.values()
    for name, value in page.correlations.bars.values().items():
        assert value == pytest.approx(expected.results[name].pearson, abs=1e-12)
    assert not loads, "the battery's batches must not reread the study"


def test_rating_in_the_window_reaches_the_dashboard(qtbot, synth) -> None:
    """The whole path: the rating screen's Enter, the window's notification, the dashboard
    (hidden while rating) catching up when shown again."""
    from meaningbench.ui.launch import start

    path, _ = synth
    window = start(None, open_initial=False)
    qtbot.addWidget(window)
    window.runner.show_error_dialogs = False
    try:
        assert window.studies.open_path(path)
        assert window.show_page("dashboard")
        page = window.page("dashboard")
        wait_ready(qtbot, page)
        version = page.controller.version
        assert window.show_page("annotate")
        annotate = window.page("annotate")
        assert annotate.start("window-rater")
        screen = annotate.screen
        rated = []
        for _ in range(4):  # the queue may open with a hidden control item
            rated.append(screen.current_item().item_id)
            qtbot.keyClicks(QApplication.focusWidget() or screen, "3")
            qtbot.keyClick(QApplication.focusWidget() or screen, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: not c_pending(page), timeout=5000)
        assert page.controller.version > version  # applied while hidden
        assert window.show_page("dashboard")
        wait_ready(qtbot, page)
        expected = _fresh(window.context.study)
        for name, value in page.correlations.bars.values().items():
            assert value == pytest.approx(expected.results[name].pearson, abs=1e-12)
        assert "window-rater" in page.controller.qc.raters
    finally:
        window.close()
