"""The lead adds practice items from the settings' Queues and QC tab (*Add practice
items…*): a good CSV adds its pairs at once and offers the pass mark out of them; a bad
one is refused whole, the reader's reason (file, row, column) shown under the button."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from meaningbench.db.models import PracticeItem
from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget
from tests.kits.campaign_helpers import lead_study
from tests.ops.study_rows import every_row

GOOD = (
    "source,output,low,high,explanation\n"
    "The cat sat on the mat.,The cat sat.,60,90,Only the place is lost.\n"
    "The storm closed the bridge.,The bridge opened.,0,20,Reversed.\n"
)
# The second row's range is not a range in 0–100: nothing of the file may be added.
BAD = (
    "source,output,low,high\n"
    "Rain fell all day.,Rain fell all day.,90,100\n"
    "The storm closed the bridge.,The bridge opened.,40,120\n"
)


def test_a_good_file_adds_its_items_and_offers_the_pass_mark(qtbot, tmp_path: Path) -> None:
    study = lead_study(tmp_path / "lead.mbstudy", seed=3, n_sources=4)
    try:
        widget = AnnotationSettingsWidget(study, sections=("queues",))
        qtbot.addWidget(widget)
        assert not widget.pass_mark.isEnabled()
        assert widget.pass_mark.toolTip() == "Add practice items first: Add practice items…"
        assert widget.add_practice_button.text() == "Add practice items…"
        (tmp_path / "practice.csv").write_text(GOOD, encoding="utf-8")
        assert widget.add_practice_file(tmp_path / "practice.csv") == 2
        assert widget.practice_note.text() == "Added 2 practice items from practice.csv."
        assert widget.pass_mark.isEnabled() and widget.pass_mark.toolTip() == ""
        assert widget.practice_count.text() == "of the 2 practice items within"
        assert (widget.pass_items.maximum(), widget.pass_items.value()) == (2, 2)
        with study.session() as s:
            stored = s.execute(select(PracticeItem.source, PracticeItem.low, PracticeItem.high))
            assert stored.all() == [
                ("The cat sat on the mat.", 60.0, 90.0),
                ("The storm closed the bridge.", 0.0, 20.0),
            ]
        (tmp_path / "one.csv").write_text(GOOD.splitlines()[0] + "\nA.,B.,0,100,\n", "utf-8")
        assert widget.add_practice_file(tmp_path / "one.csv") == 1  # after the others
        assert widget.practice_note.text() == "Added 1 practice item from one.csv."
        assert widget.practice_count.text() == "of the 3 practice items within"
        widget.pass_mark.setChecked(True)
        assert widget.pass_items.value() == 3 and widget.apply()  # 3 of the 3 is reachable
    finally:
        study.close()


def test_a_bad_file_is_refused_with_its_reason_and_adds_nothing(qtbot, tmp_path: Path) -> None:
    study = lead_study(tmp_path / "lead.mbstudy", seed=3, n_sources=4)
    try:
        widget = AnnotationSettingsWidget(study, sections=("queues",))
        qtbot.addWidget(widget)
        (tmp_path / "practice.csv").write_text(BAD, encoding="utf-8")
        before = every_row(study.path)
        assert widget.add_practice_file(tmp_path / "practice.csv") == 0
        said = widget.practice_note.text()
        assert said.startswith("practice.csv, row 3, columns 'low'/'high'") and "120" in said
        assert widget.practice_note.property("role") == "error"
        assert every_row(study.path) == before
        assert not widget.pass_mark.isEnabled()
        assert widget.practice_count.text() == "of the 0 practice items within"
    finally:
        study.close()
