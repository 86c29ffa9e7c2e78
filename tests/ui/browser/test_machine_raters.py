"""The browser on a study with a machine rater (a tiny LLM judge stored by
`meaningbench judge --as-rater` over real CSMD dev pairs): the rater filter appears and names
the judge, the Ratings column counts the machine's ratings apart, the detail pane tags them,
and the filter narrows Rated/Unrated to whose ratings the user chose."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from meaningbench.ui.browser.model import FIXED_COLUMNS
from tests.judged_study import RATER, JudgedStudy, judged_csmd_study
from tests.ui.browser.test_page import all_ids, wait_filter
from tests.ui.conftest import open_in

COL = {k: i for i, (k, _h, _s) in enumerate(FIXED_COLUMNS)}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> JudgedStudy:
    return judged_csmd_study(tmp_path_factory.mktemp("judged"))


def test_the_browser_marks_machine_ratings(window, qtbot, judged) -> None:
    open_in(window, judged.path, qtbot)
    page = window.page("browser")
    model = page.model
    combo = page.raters_combo
    assert not combo.isHidden()
    assert RATER in combo.toolTip() and "llm_judge" in combo.toolTip()
    machine_entry = combo.findData("machine")
    assert RATER in str(combo.itemData(machine_entry, Qt.ItemDataRole.ToolTipRole))
    for row, item_id in enumerate(all_ids(model)):
        shown = model.data(model.index(row, COL["ratings"]))
        tip = model.data(model.index(row, COL["ratings"]), Qt.ItemDataRole.ToolTipRole)
        if item_id in judged.judged:
            assert shown == "1 ⚙ 1"
            assert "1 rating by people, 1 by machine raters" in tip
        else:
            assert shown == "1" and tip is None

    page.table.selectRow(all_ids(model).index(judged.judged[0]))
    qtbot.waitUntil(lambda: page.detail.item_id == judged.judged[0], timeout=10_000)
    html = page.detail.view.toHtml()
    assert "⚙" in html and "machine" in html and RATER in html
    assert "never part of the item's human score" in page.detail.view.toPlainText()
    # The tag's tooltip names the judge (the rich text keeps it as the span's tooltip).
    cursor = page.detail.view.document().find("⚙")
    assert RATER in cursor.charFormat().toolTip() and "llm_judge" in cursor.charFormat().toolTip()

    page.rated_combo.setCurrentIndex(page.rated_combo.findData("unrated"))
    combo.setCurrentIndex(machine_entry)
    wait_filter(qtbot, page)
    assert all_ids(model) == judged.unjudged
    combo.setCurrentIndex(combo.findData("people"))
    wait_filter(qtbot, page)
    assert all_ids(model) == []
    page.rated_combo.setCurrentIndex(page.rated_combo.findData("rated"))
    combo.setCurrentIndex(machine_entry)
    wait_filter(qtbot, page)
    assert all_ids(model) == judged.judged


def test_no_machine_rater_no_rater_filter(window, qtbot, study_with_facts) -> None:
    path, _facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    assert page.raters_combo.isHidden()
    assert page.current_filter().raters == "all"


def test_the_machine_tag_tooltip_reads_as_written(window, qtbot, study_with_facts) -> None:
    """The tag's tooltip is plain words: "an item's", not "an item&#x27;s"."""
    from meaningbench.db.models import Annotator, Dimension, Rating
    from meaningbench.db.study import open_study
    from meaningbench.queries.raters import MACHINE_KIND, machine_tooltip

    path, facts = study_with_facts
    judge, model = 'llm_judge[template="da"]', "HuggingFaceTB/SmolLM2-360M-Instruct"
    study = open_study(path)
    with study.session(write=True) as s:
        rater = Annotator(
            name="judge:smol", kind=MACHINE_KIND, meta={"judge": judge, "model": model}
        )
        s.add(rater)
        s.flush()
        meaning = s.query(Dimension).filter_by(name="meaning").one()
        s.add(
            Rating(
                item_id=facts.item_ids[0],
                annotator_id=rater.id,
                dimension_id=meaning.id,
                value=60.0,
                origin="judge",
            )
        )
    study.close()
    open_in(window, path, qtbot)
    page = window.page("browser")
    page.detail.show_item(facts.item_ids[0])
    cursor = page.detail.view.document().find("⚙")
    assert not cursor.isNull()
    tip = cursor.charFormat().toolTip()
    assert tip == machine_tooltip("judge:smol", judge, model)
    assert "'s" in tip and "&#" not in tip and "&quot;" not in tip
