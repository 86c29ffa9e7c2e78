"""The lead sets the practice pass mark from the settings' Queues and QC tab: a box, the
items and points, the attempts and what follows; a study without practice items offers
no pass mark, and the next kit carries the one set."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from PySide6.QtCore import QPoint, Qt

from meaningbench.annotation.practice import add_practice
from meaningbench.annotation.protocols import study_protocol
from meaningbench.kits.making import make_kits
from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget
from tests.annotation.test_practice_pass_mark import PRACTICE
from tests.kits.campaign_helpers import lead_study


def test_the_pass_mark_is_set_in_the_queues_tab_and_kits_carry_it(qtbot, tmp_path: Path) -> None:
    study = lead_study(tmp_path / "lead.mbstudy", seed=3, n_sources=4)
    try:
        bare = AnnotationSettingsWidget(study, sections=("queues",))
        qtbot.addWidget(bare)
        assert not bare.pass_mark.isEnabled() and "Add practice items" in bare.pass_mark.toolTip()
        add_practice(study, PRACTICE)
        widget = AnnotationSettingsWidget(study, sections=("queues",))
        qtbot.addWidget(widget)
        widget.resize(1000, 760)
        with qtbot.waitExposed(widget):
            widget.show()
        assert widget.pass_mark.isEnabled() and not widget.pass_items.isEnabled()
        box = widget.pass_mark
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
        assert box.isChecked() and widget.pass_items.isEnabled()
        assert widget.pass_items.maximum() == 3  # no more than the study's practice items
        widget.pass_items.setValue(2)
        widget.pass_within.setValue(7.5)
        widget.pass_attempts.setValue(3)
        widget.after_failed.setCurrentIndex(widget.after_failed.findData("flag"))
        assert widget.apply()
        mark = study_protocol(study).pass_mark
        assert mark is not None and (mark.items, mark.points, mark.attempts) == (2, 7.5, 3)
        assert mark.after_failed == "flag"
        again = AnnotationSettingsWidget(study, sections=("queues",))
        qtbot.addWidget(again)
        assert again.pass_mark.isChecked() and again.pass_within.value() == 7.5
        make_kits(study, ["ana"], tmp_path / "kits")
    finally:
        study.close()
    conn = sqlite3.connect(
        f"{(tmp_path / 'kits' / 'ana.mbkit').resolve().as_uri()}?mode=ro", uri=True
    )
    try:
        raw = conn.execute("SELECT value FROM study_setting WHERE key = 'annotation'").fetchone()
    finally:
        conn.close()
    carried = json.loads(raw[0])
    assert (carried["practice_pass_items"], carried["practice_after_failed"]) == (2, "flag")
