"""The sanity checks tab: run from its button as a job, the study's layout, cached."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from meaningbench.analysis.sanity import study_sanity
from meaningbench.db.study import open_study
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.runtime import JobContext
from meaningbench.ui.dashboard.tables import BandedHeader
from tests.ui.dashboard.studies import synthetic_study


@pytest.fixture
def scored(tmp_path: Path) -> Path:
    """A study with real lexical metric runs (the checks re-create each run's metric)."""
    study, _ = synthetic_study(tmp_path / "lex.mbstudy", n_items=40, n_metrics=0, n_raters=2)
    path = study.path
    study.close()
    request = ScoreRequest(path, ["bleu", "chrf"], {"workers": 1, "pool": "never"})
    assert all(s.status == "done" for s in score_study(request, JobContext()))
    return path


def _run(page, qtbot) -> None:  # noqa: ANN001
    panel = page.sanity
    started = []
    page.context.runner.job_started.connect(lambda h: started.append(h.title))
    qtbot.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
    assert started == ["Sanity checks"], "the checks run as a job in the window's runner"
    qtbot.waitUntil(lambda: panel.handle is None, timeout=60_000)


def test_run_show_and_cache(open_page, scored, qtbot) -> None:
    page = open_page(scored)
    panel = page.sanity
    assert panel.panel.showing_message  # nothing computed before the button
    panel.count.setValue(50)
    _run(page, qtbot)
    with open_study(scored) as study:
        expected = study_sanity(study, None, n=50, seed=0)
    shown = panel.table.frame
    assert list(shown.index) == list(expected.results)
    frame = expected.to_frame()
    for name in expected.results:
        for column in shown.columns:
            assert shown.loc[name, column] == pytest.approx(frame.loc[name, column])
    # BLEU of a sentence against itself is 100: every identical pair passes every threshold.
    assert (
        shown.loc["bleu[refs=source]", [c for c in shown.columns if c.startswith("identical")]] == 1
    ).all()
    assert panel.table.cell_text(0, 1) == "100.0 %"
    header = panel.table.horizontalHeader()
    assert isinstance(header, BandedHeader)
    assert [text for _, _, text in header.bands] == [
        "Identical pairs (s, s)",
        "Unrelated pairs (s, u)",
    ]
    assert panel.chart.means["bleu[refs=source]"][0] == pytest.approx(100.0)

    # Cached for the session: another setting is not run yet, coming back needs no job.
    assert panel.run_button.text() == "Run again"
    panel.count.setValue(60)
    assert panel.panel.showing_message
    started = []
    page.context.runner.job_started.connect(lambda h: started.append(h.title))
    panel.count.setValue(50)
    assert not panel.panel.showing_message and not started
    assert list(panel.table.frame.index) == list(expected.results)


def test_sanity_exports(open_page, scored, qtbot, tmp_path) -> None:
    page = open_page(scored)
    page.sanity.count.setValue(20)
    _run(page, qtbot)
    page.sanity.panel.export("csv", str(tmp_path / "s.csv"))
    page.sanity.panel.export("tex", str(tmp_path / "s.tex"))
    frame = pd.read_csv(tmp_path / "s.csv", index_col="metric")
    assert "identical ≥95" in frame.columns and "unrelated =0" in frame.columns
    tex = (tmp_path / "s.tex").read_text(encoding="utf-8")
    assert r"identical $\geq$95" in tex
    names = {p.name for p in page.export_all(tmp_path / "all")}
    assert {"sanity-checks.csv", "sanity-means.png", "sanity-means.svg"} <= names
    handle = page.export_report(tmp_path / "r.html")
    with qtbot.waitSignal(handle.finished, timeout=30_000):
        pass
    assert "Sanity checks" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_cancel_stops_the_checks(open_page, scored, qtbot) -> None:
    page = open_page(scored)
    panel = page.sanity
    panel.run()
    assert panel.cancel_button.isVisibleTo(panel) and not panel.run_button.isEnabled()
    # The job opens the study and builds its pairs before scoring: a cancel sent now is
    # seen at its first check, before any metric runs.
    panel.cancel_button.click()
    qtbot.waitUntil(lambda: panel.handle is None, timeout=60_000)
    assert panel.status.text() == "Cancelled."
    assert page.controller.sanity == {} and panel.panel.showing_message
    assert panel.run_button.isEnabled() and not panel.cancel_button.isVisibleTo(panel)


def test_the_mean_score_chart_stays_readable_with_15_metrics(open_page, scored, qtbot) -> None:
    from dataclasses import replace

    from meaningbench.analysis.sanity import SanityTable

    page = open_page(scored)
    page.resize(900, 560)  # the dashboard in a 1024×640 window
    qtbot.mouseClick(
        page.tabs.tabBar(),
        Qt.MouseButton.LeftButton,
        pos=page.tabs.tabBar().tabRect(page.tabs.indexOf(page.sanity)).center(),
    )
    with open_study(scored) as study:
        computed = study_sanity(study, None, n=20, seed=0)
    # Fifteen metric rows, each with the real checks' values of one of the two runs.
    runs = list(computed.results.values())
    table = SanityTable(
        {
            f"metric-{k:02d}": replace(runs[k % len(runs)], metric=f"metric-{k:02d}")
            for k in range(15)
        }
    )
    page.sanity.show_table(table)
    qtbot.wait(50)
    chart = page.sanity.chart
    line = chart.fontMetrics().height()
    assert chart.isVisible() and len(chart.means) == 15
    # Every metric gets two bars at least a text line high each; the rest scrolls.
    assert chart.height() / 15 >= 2 * line
    scroll = page.sanity.chart_scroll
    if chart.height() > scroll.viewport().height():
        assert scroll.verticalScrollBar().maximum() > 0
    assert page.minimumSizeHint().height() <= 560
