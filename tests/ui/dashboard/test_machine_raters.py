"""The dashboard on SimpDA 2022's per-rater ratings judged by a tiny LLM judge stored as a
machine rater (`meaningbench judge --as-rater`): the agreement tab shows the machine rater
beside the people with the figures `raters` and `agreement` print, and "Which metric" marks
the judge's column, ranked against human scores its ratings never enter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from meaningbench.analysis.agreement import study_agreement
from meaningbench.analysis.metaeval_study import metaeval_data_from_study
from meaningbench.analysis.rater_checks import study_rater_checks
from meaningbench.cli import main
from meaningbench.db.study import open_study
from meaningbench.queries.which_metric import WhichMetricOptions, compute_which_metric
from tests.judged_study import RATER, judged_simpda_study, simpda_part
from tests.ui.dashboard.conftest import wait_ready

ITEMS = 8


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    study = judged_simpda_study(tmp_path, items=ITEMS)
    assert main(["score", str(study.path), "--metrics", "bleu,chrf"]) == 0
    return study.path


def test_the_agreement_tab_shows_the_machine_rater_beside_the_people(
    open_page, judged, qtbot
) -> None:
    page = open_page(judged)
    with open_study(judged) as study:
        machine = next(c for c in study_rater_checks(study) if c.machine)
        agreement = study_agreement(study)
    panel = page.quality
    assert not panel.machine_panel.isHidden() and not panel.machine_note.isHidden()
    frame = panel.machine_table.frame
    assert list(frame.index) == [RATER]
    row = frame.loc[RATER]
    assert row["ratings"] == machine.n_ratings == ITEMS
    assert row["r"] == pytest.approx(machine.agreement_r, nan_ok=True)
    assert row["n"] == machine.agreement_n
    assert row["alpha_with"] == pytest.approx(agreement.machine[RATER]["alpha_with"])
    assert row["alpha_without"] == pytest.approx(agreement.alpha)
    assert row["identical_pass"] == pytest.approx(machine.identical_pass, nan_ok=True)
    # The people's own figures leave the model out.
    assert RATER not in list(panel.loo.frame.index)
    assert "never part of an item's human score" in panel.machine_note.text()


def test_which_metric_marks_the_judge_and_ranks_it_against_human_scores_only(
    open_page, judged, qtbot, tmp_path
) -> None:
    # The same ratings in a study no judge rated: the human scores must be the same.
    plain = tmp_path / "plain" / "simpda.mbstudy"
    plain.parent.mkdir()
    assert main(["import", str(plain), str(simpda_part(plain.parent, ITEMS))]) == 0
    with open_study(judged) as study:
        data = metaeval_data_from_study(study, "meaning")
    with open_study(plain) as study:
        human_only = metaeval_data_from_study(study, "meaning")
    assert list(data.sources) == list(human_only.sources)
    assert np.allclose(data.human, human_only.human, equal_nan=True)
    # Nor is the model one of the raters the rater-level measures read.
    assert data.raters is not None and human_only.raters is not None
    assert data.raters.shape == human_only.raters.shape
    assert np.allclose(data.raters, human_only.raters, equal_nan=True)

    result = compute_which_metric(judged, WhichMetricOptions())
    judge_columns = [m for m in data.metric_names if m.startswith("llm_judge")]
    assert result.machine == {judge_columns[0]: [RATER]}
    frame = result.ranking_frame()
    marked = dict(zip(frame["metric"], frame["machine_rater"], strict=True))
    assert marked[judge_columns[0]] == RATER and marked["bleu[refs=source]"] == ""

    page = open_page(judged)
    wait_ready(qtbot, page)
    tab = page.which_metric
    page.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: tab.result is not None and not tab.computing, timeout=60_000)
    table = tab.ranking
    names = {table.item(r, 1).text(): table.item(r, 1) for r in range(table.rowCount())}
    cell = names[f"{judge_columns[0]} ⚙"]
    assert RATER in cell.toolTip() and "never part of the human scores" in cell.toolTip()
    assert "bleu[refs=source]" in names
