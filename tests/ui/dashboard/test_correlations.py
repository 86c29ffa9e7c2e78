"""The dashboard shows the correlations of a real study: the same numbers as meaningbench.analysis,
and, for Pearson and Spearman, as scipy on the study's own ratings and scores."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from scipy import stats

from meaningbench.analysis.live import correlation_table
from meaningbench.db.study import open_study
from meaningbench.ui.dashboard.correlations_tab import select_data
from tests.ui.dashboard.conftest import wait_ready


def _scipy_oracle(path) -> tuple[dict[str, np.ndarray], np.ndarray, list[int]]:  # noqa: ANN001
    """Scores per metric and raw human means per item, read with plain sqlite3."""
    conn = sqlite3.connect(path)
    try:
        items = [r[0] for r in conn.execute("SELECT id FROM item ORDER BY id")]
        means = dict(
            conn.execute(
                "SELECT item_id, AVG(value) FROM rating WHERE state = 'current' GROUP BY item_id"
            ).fetchall()
        )
        scores: dict[str, dict[int, float]] = {}
        for metric, item_id, value in conn.execute(
            "SELECT m.metric, s.item_id, s.value FROM score s JOIN metric_run m ON m.id = s.run_id"
        ):
            scores.setdefault(metric, {})[item_id] = value
    finally:
        conn.close()
    human = np.array([means.get(i, np.nan) for i in items], dtype=float)
    x = {m: np.array([v.get(i, np.nan) for i in items], dtype=float) for m, v in scores.items()}
    return x, human, items


def test_bars_and_table_equal_the_analysis(open_page, synth) -> None:
    path, facts = synth
    page = open_page(path)
    tab = page.correlations
    with open_study(path) as study:
        expected = correlation_table(study, n_boot=1000, seed=0)
    assert set(tab.bars.values()) == set(facts.metric_names)
    series = tab.series
    assert series is not None and series.statistic.key == "pearson"
    for k, name in enumerate(series.names):
        r = expected.results[name]
        assert series.values[k] == pytest.approx(r.pearson, abs=1e-12)
        assert (series.lows[k], series.highs[k]) == pytest.approx(r.pearson_ci, abs=1e-12)
    # Sorted by value, best first.
    assert list(series.values) == sorted(series.values, reverse=True)
    # The table lists every statistic of every metric, with the same numbers.
    frame = tab.stats.frame
    for name, r in expected.results.items():
        assert frame.loc[name, "spearman"] == pytest.approx(r.spearman, abs=1e-12)
        assert frame.loc[name, "kendall"] == pytest.approx(r.kendall, abs=1e-12)
        assert frame.loc[name, "r2"] == pytest.approx(r.r2, abs=1e-12)
        assert frame.loc[name, "system_pearson"] == pytest.approx(r.system_pearson, abs=1e-12)
        low, high = r.spearman_ci
        assert frame.loc[name, "spearman_ci"] == f"[{low:.3f}, {high:.3f}]"


def test_values_agree_with_scipy(open_page, synth) -> None:
    path, _facts = synth
    page = open_page(path)
    x, human, _ = _scipy_oracle(path)
    shown = page.correlations.bars.values()
    for name, values in x.items():
        keep = np.isfinite(values) & np.isfinite(human)
        assert shown[name] == pytest.approx(stats.pearsonr(values[keep], human[keep])[0], abs=1e-9)
    select_data(page.correlations.statistic, "spearman")
    shown = page.correlations.bars.values()
    for name, values in x.items():
        keep = np.isfinite(values) & np.isfinite(human)
        rho = stats.spearmanr(values[keep], human[keep])[0]
        assert shown[name] == pytest.approx(rho, abs=1e-9)


@pytest.mark.parametrize("statistic", ["kendall", "r2", "system_pearson"])
def test_every_statistic_can_be_charted(open_page, synth, qtbot, statistic: str) -> None:
    path, _ = synth
    page = open_page(path)
    tab = page.correlations
    select_data(tab.statistic, statistic)
    qtbot.waitUntil(lambda: tab.series is not None and tab.series.statistic.key == statistic)
    with open_study(path) as study:
        expected = correlation_table(study, n_boot=0)
    for name, value in tab.bars.values().items():
        assert value == pytest.approx(getattr(expected.results[name], statistic), abs=1e-12)
    # No bootstrap interval exists for these statistics: no error bars are drawn.
    assert not tab.series.has_intervals


def test_sort_by_name_and_z_scores(open_page, synth, qtbot) -> None:
    path, _ = synth
    page = open_page(path)
    tab = page.correlations
    select_data(tab.sort, "name")
    assert tab.series.names == sorted(tab.series.names, key=str.casefold)
    select_data(page.scale, True)
    wait_ready(qtbot, page)
    with open_study(path) as study:
        expected = correlation_table(study, z=True, n_boot=1000, seed=0)
    for k, name in enumerate(tab.series.names):
        r = expected.results[name]
        assert tab.series.values[k] == pytest.approx(r.pearson, abs=1e-12)
        assert tab.series.lows[k] == pytest.approx(r.pearson_ci[0], abs=1e-12)
    assert "z-score" in tab.scatter.human_label


def test_ceiling_and_quality_panels_come_from_the_analysis(open_page, synth) -> None:
    from meaningbench.analysis.agreement import study_agreement
    from meaningbench.analysis.qc import study_qc

    path, facts = synth
    page = open_page(path)
    with open_study(path) as study:
        agreement = study_agreement(study)
        qc = study_qc(study)
    assert page.correlations.bars.ceiling == pytest.approx(agreement.ceiling, abs=1e-12)
    line = page.correlations.bars.ceiling_line
    assert line.isVisible() and line.value() == pytest.approx(agreement.ceiling)
    assert line.label.toPlainText() == f"human ceiling {agreement.ceiling:.2f}"
    summary = page.quality.summary.frame
    assert summary.loc["Krippendorff's alpha (interval)", "value"] == pytest.approx(agreement.alpha)
    assert list(page.quality.loo.frame.index) == sorted(facts.raters)
    assert list(page.quality.qc_table.frame.index) == list(qc.to_frame().index)


def test_heatmap_holds_the_metric_correlations(open_page, synth) -> None:
    path, _ = synth
    page = open_page(path)
    x, _, _ = _scipy_oracle(path)
    frame = page.heatmap.frame
    assert frame is not None
    for a in frame.index:
        for b in frame.columns:
            keep = np.isfinite(x[a]) & np.isfinite(x[b])
            assert frame.loc[a, b] == pytest.approx(stats.pearsonr(x[a][keep], x[b][keep])[0])
    cells = [c for c in page.heatmap.cells if c.isVisible()]
    assert len(cells) == len(frame) ** 2
    assert cells[1].toPlainText() == f"{frame.iat[0, 1]:.2f}"
    select_data(page.heat_method, "spearman")
    assert page.heatmap.frame.loc[frame.index[0], frame.index[1]] == pytest.approx(
        stats.spearmanr(x[frame.index[0]], x[frame.index[1]])[0]
    )


def test_empty_study_says_what_is_missing(open_page, new_study, qtbot) -> None:
    path = new_study.path
    new_study.close()
    page = open_page(path, wait=False)
    qtbot.waitUntil(lambda: page.controller.state.loaded and not page.controller.busy)
    panel = page.correlations.bars_panel
    assert panel.showing_message
    assert "No metric scores yet" in panel.message.text()
