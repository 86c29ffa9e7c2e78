"""Study settings: the name, and the annotation protocol tabs writing through the engine."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QComboBox

from tests.ui.conftest import open_in


def dimension_rows(path: Path) -> dict[str, tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        return {
            n: (int(a), s) for n, a, s in conn.execute("SELECT name, active, scale FROM dimension")
        }
    finally:
        conn.close()


def test_name_is_saved_and_shown(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    dialog = window.show_settings_dialog()
    assert dialog.name_edit.placeholderText() == "pop"
    assert f"{len(facts.item_ids)} items" in dialog.contents_label.text()
    dialog.name_edit.setText("Pilot study 2024")
    dialog.accept()
    assert window.windowTitle() == "Pilot study 2024 — MeaningBench"
    assert window.status.study_label.text() == "Pilot study 2024"
    conn = sqlite3.connect(path)
    (value,) = conn.execute("SELECT value FROM study_setting WHERE key = 'name'").fetchone()
    conn.close()
    assert value == '"Pilot study 2024"'


def test_protocol_tabs_write_dimensions_and_refuse_a_rated_scale(
    window, qtbot, study_with_facts
) -> None:
    path, _ = study_with_facts
    open_in(window, path, qtbot)
    dialog = window.show_settings_dialog()
    titles = [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())]
    assert titles == ["Study", "Scales", "Queues and QC", "Guidelines"]
    scales = dialog.sections["scales"]
    names = [scales.table.cellWidget(r, 1).text() for r in range(scales.table.rowCount())]
    fluency = names.index("fluency")
    box = scales.table.cellWidget(fluency, 0)
    assert isinstance(box, QCheckBox) and not box.isChecked()
    box.setChecked(True)
    assert dialog.save()
    assert dimension_rows(path)["fluency"] == (1, "continuous")
    # "meaning" already has ratings: its scale can no longer change.
    meaning = names.index("meaning")
    combo = scales.table.cellWidget(meaning, 2)
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findData("likert"))
    dialog.accept()
    assert dialog.isVisible()  # refused: the dialog stays open on the tab that says why
    assert dialog.tabs.currentIndex() == dialog.tab_of(scales)
    assert "ratings" in scales.error.text()
    assert dimension_rows(path)["meaning"] == (1, "continuous")
    dialog.reject()
