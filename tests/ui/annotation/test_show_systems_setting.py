"""The lead shows system names in kits, or leaves them out, from the settings' Scales tab:
a click on the checkbox, Apply, and the next kit follows it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from PySide6.QtCore import QPoint, Qt

from meaningbench.annotation.protocols import study_protocol
from meaningbench.kits.making import make_kits
from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget
from tests.kits.campaign_helpers import lead_study


def _kit_systems(kit: Path) -> set[str | None]:
    conn = sqlite3.connect(f"{kit.resolve().as_uri()}?immutable=1", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT system FROM item")}
    finally:
        conn.close()


def _click(qtbot, widget: AnnotationSettingsWidget) -> None:
    if not widget.isVisible():
        widget.resize(1000, 700)
        with qtbot.waitExposed(widget):
            widget.show()
    box = widget.show_systems
    # On the box itself: the row is as wide as the form, its text only as wide as the words.
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))


def test_the_checkbox_stores_show_systems_and_the_next_kit_follows_it(
    qtbot, tmp_path: Path
) -> None:
    study = lead_study(tmp_path / "lead.mbstudy", seed=3, n_sources=6)
    try:
        widget = AnnotationSettingsWidget(study, sections=("scales",))
        qtbot.addWidget(widget)
        box = widget.show_systems
        assert not box.isChecked() and "blind" in box.toolTip()
        assert "system" in box.text()
        _click(qtbot, widget)
        assert box.isChecked() and widget.apply()
        assert study_protocol(study).show_systems is True
        make_kits(study, ["ana"], tmp_path / "shown")
        assert _kit_systems(tmp_path / "shown" / "ana.mbkit") == {"system-0", "system-1"}

        again = AnnotationSettingsWidget(study, sections=("scales",))
        qtbot.addWidget(again)
        assert again.show_systems.isChecked()  # read back from the file
        _click(qtbot, again)
        assert not again.show_systems.isChecked() and again.apply()
        assert study_protocol(study).show_systems is False
        make_kits(study, ["ana"], tmp_path / "blind")
        assert _kit_systems(tmp_path / "blind" / "ana.mbkit") == {None}
    finally:
        study.close()


def test_the_queues_tab_keeps_the_file_s_choice(qtbot, tmp_path: Path) -> None:
    """Another tab's save never undoes the Scales tab's choice (each writes its own fields)."""
    study = lead_study(tmp_path / "lead.mbstudy", seed=3, n_sources=2)
    try:
        queues = AnnotationSettingsWidget(study, sections=("queues",))
        scales = AnnotationSettingsWidget(study, sections=("scales",))
        qtbot.addWidget(queues)
        qtbot.addWidget(scales)
        _click(qtbot, scales)
        assert scales.apply()
        assert queues.apply()
        assert study_protocol(study).show_systems is True
    finally:
        study.close()
