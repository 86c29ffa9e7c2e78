"""Reading the Which metric tab right: what n a correlation runs over, degenerate and
small-n figures named as such, what a cluster means, p-values the resamples cannot tell,
one default grouping with one name everywhere, and a short laptop screen."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from meaningbench.analysis.metaeval_choices import DEFAULT_GROUPING, GROUPING_NAMES
from meaningbench.analysis.metaeval_significance import CLUSTER_LINE, CLUSTER_MEANING
from meaningbench.cli import build_parser, main
from meaningbench.datasets.importer import import_file
from meaningbench.queries.which_metric import GROUPING_CHOICES, WhichMetricOptions
from tests.ui.dashboard.studies import Synthetic, synthetic_study


@pytest.fixture
def paired(tmp_path: Path) -> tuple[Path, Synthetic]:
    """4 systems; the attribute `pair` puts systems 0 and 1 in "ab", 2 and 3 in "cd": at
    system level each category holds 2 systems."""
    study, facts = synthetic_study(
        tmp_path / "pairs.mbstudy", n_items=80, n_metrics=7, n_raters=2, rated_share=1.0
    )
    attrs = tmp_path / "pairs.csv"
    with attrs.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["source", "output", "system", "pair"])
        for k, item_id in enumerate(facts.item_ids):
            system = f"system-{k % 4}"
            w.writerow([facts.sources[item_id], facts.outputs[item_id], system,
                        "ab" if k % 4 < 2 else "cd"])  # fmt: skip
    import_file(study, attrs, dataset="synthetic")
    path = study.path
    study.close()
    return path, facts


def _tab(open_page, path: Path, qtbot, grouping: str | None = None):  # noqa: ANN001, ANN202
    page = open_page(path)
    tab = page.which_metric
    page.tabs.setCurrentWidget(tab)
    if grouping is not None:
        tab.grouping.setCurrentIndex(tab.grouping.findData(grouping))

    def done() -> bool:
        r = tab.result
        return (
            r is not None
            and not tab.computing
            and r.by is not None
            and (grouping is None or r.options.group_by == grouping)
        )

    qtbot.waitUntil(done, timeout=60_000)
    return page, tab


def test_two_systems_are_not_defined_and_few_systems_carry_a_warning(
    open_page, paired, qtbot
) -> None:
    path, _ = paired
    _page, tab = _tab(open_page, path, qtbot, "system")
    frame = tab.result.categories
    per_pair = frame[frame["category"].isin(["ab", "cd"])]
    assert len(per_pair) == 14
    assert per_pair["value"].isna().all()
    assert set(per_pair["not_defined"]) == {"not defined: 2 systems"}
    assert set(tab.bars.drawn) == {"all outputs"}  # no bar of 1.000 for a pair of systems
    assert tab.status.full_text().startswith("over 4 systems (80 outputs) · ")
    assert not tab.warning.isHidden()
    assert tab.warning.text().startswith("⚠ Only 4 systems: a correlation over so few systems")
    # Over all outputs together: 80 outputs, no warning.
    tab.grouping.setCurrentIndex(tab.grouping.findData("none"))
    qtbot.waitUntil(lambda: tab.result.options.group_by == "none" and not tab.computing,
                    timeout=60_000)  # fmt: skip
    assert tab.warning.isHidden()


def test_the_tab_says_what_a_cluster_means_and_what_p_below_the_resamples_reads(
    open_page, paired, qtbot
) -> None:
    path, _ = paired
    _page, tab = _tab(open_page, path, qtbot)
    assert tab.cluster_line.text() == CLUSTER_LINE and tab.cluster_line.isVisible()
    assert tab.cluster_line.toolTip() == CLUSTER_MEANING
    assert tab.ranking.horizontalHeaderItem(0).toolTip() == CLUSTER_MEANING
    assert tab.ranking.item(0, 0).toolTip() == CLUSTER_MEANING
    p = tab.result.p_values()
    cells = {
        tab.pvalues.item(i, j).text()
        for i in range(len(p))
        for j in range(len(p))
        if i != j and float(p.iloc[i, j]) == 0.0
    }
    assert cells == {"< 0.001"}  # metric00 is far better than metric06: p = 0 of 1,000
    assert "0.000" not in {
        tab.pvalues.item(i, j).text() for i in range(len(p)) for j in range(len(p)) if i != j
    }


def _default_of(command: str, option: str) -> object:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command].get_default(option)


def test_one_default_grouping_and_one_name_everywhere(
    open_page, paired, qtbot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert WhichMetricOptions().group_by == DEFAULT_GROUPING
    assert _default_of("metaeval", "group_by") == DEFAULT_GROUPING
    assert _default_of("report", "group_by") == DEFAULT_GROUPING
    for key, shown in GROUPING_CHOICES.items():
        assert shown.lower() == GROUPING_NAMES[key]
    path, _ = paired
    _page, tab = _tab(open_page, path, qtbot)
    assert tab.grouping.currentData() == DEFAULT_GROUPING
    capsys.readouterr()
    assert main(["metaeval", str(path), "--json", "--no-stopping", "--measures", "pearson"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ranking"]["grouping"] == GROUPING_NAMES[DEFAULT_GROUPING]
    shown = {tab.ranking.item(r, 1).text(): tab.ranking.item(r, 0).text()
             for r in range(tab.ranking.rowCount())
             if tab.ranking.row_kinds[r] == "metric"}  # fmt: skip
    printed = {r["metric"]: str(r["cluster"]) for r in out["ranking"]["ranking"]}
    assert shown == printed  # the tab's clusters are the command's, out of the box
    report = tmp_path / "r.html"
    assert main(["report", str(path), str(report), "--no-sanity", "--boot", "50"]) == 0
    html = report.read_text(encoding="utf-8")
    assert f"r, {GROUPING_NAMES[DEFAULT_GROUPING]}, over 80 outputs (perm-both" in html


def test_a_1024_by_640_window_shows_every_cluster_and_folds_empty_panels(
    window, qtbot, synth
) -> None:
    from tests.ui.conftest import open_in
    from tests.ui.dashboard.conftest import wait_ready

    path, facts = synth  # no item attributes
    from meaningbench.db.study import open_study
    from tests.analysis.studybuild import add_ratings

    with open_study(path) as study:  # a judge stored as a rater: the fourth table
        add_ratings(study, "judge", {i: 40.0 + i % 50 for i in facts.item_ids}, kind="machine")
    window.show()
    open_in(window, path, qtbot)
    window.resize(1024, 640)
    assert window.show_page("dashboard")
    dashboard = window.page("dashboard")
    wait_ready(qtbot, dashboard)
    tab = dashboard.which_metric
    dashboard.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.result is not None and not tab.computing, timeout=60_000)
    QApplication.processEvents()
    assert not tab.bars_panel.isVisible()  # nothing to compare per category: no room taken
    table = tab.ranking
    last = table.rowCount() - 1
    # The metrics, then 3 raters and the one-rater baseline among them.
    assert table.rowCount() == len(facts.metric_names) + 4
    bottom = table.rowViewportPosition(last) + table.rowHeight(last)
    assert table.rowViewportPosition(0) >= 0 and bottom <= table.viewport().height()
    # Agreement and rater QC: each table keeps five rows in sight (the tab scrolls).
    dashboard.tabs.setCurrentWidget(dashboard.quality)
    QApplication.processEvents()
    quality = dashboard.quality
    assert quality.machine_panel.isVisibleTo(quality)
    for t in (quality.summary, quality.loo, quality.qc_table, quality.machine_table):
        rows = min(5, t.model().rowCount())
        assert rows >= 1 and t.viewport().height() >= rows * t.rowHeight(0), t.objectName()


def test_at_1024_by_640_the_ranking_keeps_every_cluster_beside_the_categories(
    window, qtbot, paired
) -> None:
    """With item attributes too, the ranking takes the whole height on the left: its 7
    rows stay in sight while the bars and p-values share the right."""
    from tests.ui.conftest import open_in
    from tests.ui.dashboard.conftest import wait_ready

    path, facts = paired
    window.show()
    open_in(window, path, qtbot)
    window.resize(1024, 640)
    assert window.show_page("dashboard")
    dashboard = window.page("dashboard")
    wait_ready(qtbot, dashboard)
    tab = dashboard.which_metric
    dashboard.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(
        lambda: tab.result is not None and not tab.computing and tab.result.by == "pair",
        timeout=60_000,
    )
    QApplication.processEvents()
    assert tab.bars_panel.isVisible()
    table = tab.ranking
    # 7 metrics and the one-rater baseline in sight; the 2 raters' own rows below them.
    assert table.rowCount() == len(facts.metric_names) + 3 == 10
    assert table.row_kinds[-2:] == ["human", "human"]
    last = table.rowCount() - 3
    assert table.rowViewportPosition(last) + table.rowHeight(last) <= table.viewport().height()


def test_cluster_shading_follows_a_new_palette(open_page, paired, qtbot) -> None:
    """A dark theme's palette arrives after the tab's own colour update: the shaded
    clusters take its colour, not the light theme's (white rows under light text)."""
    from meaningbench.ui.theme import build_palette

    path, _ = paired
    _page, tab = _tab(open_page, path, qtbot)
    table = tab.ranking
    shaded = [r for r in range(table.rowCount())
              if table.row_kinds[r] == "metric" and int(table.item(r, 0).text() or 1) % 2 == 0]  # fmt: skip
    if not shaded:
        pytest.skip("a single cluster: nothing shaded")
    for kind in ("dark", "light"):
        table.setPalette(build_palette(kind))
        QApplication.processEvents()
        want = build_palette(kind).alternateBase().color()
        assert table.item(shaded[0], 1).background().color() == want, kind
