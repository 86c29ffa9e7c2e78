"""Scoring against the source while the items have references is said, with a one-click fix."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.ui.conftest import open_in
from tests.ui.dialogs.test_battery import metric_item, wait_metrics


def test_a_warning_and_a_switch_when_references_would_be_ignored(
    window, qtbot, study_with_facts
) -> None:
    path, facts = study_with_facts  # every fifth item has a human reference
    window.show()
    open_in(window, path, qtbot)
    dialog = window.show_battery_dialog()
    wait_metrics(qtbot, dialog)
    reference_based = [m.name for m in dialog.metrics if m.needs_references and m.available]
    assert reference_based
    dialog.set_checked([reference_based[0]])
    assert dialog.refmode_combo.currentData() == "source"
    warning = dialog.reference_warning
    assert warning.isVisible()
    assert (
        f"12 of {len(facts.item_ids)} items have human references" in dialog.reference_label.text()
    )
    qtbot.mouseClick(dialog.use_references_button, Qt.MouseButton.LeftButton)
    assert dialog.refmode_combo.currentData() == "references"
    assert dialog.options()["reference_mode"] == "references"
    assert not warning.isVisible()
    # Back to the source by keyboard: the warning returns; unchecking the metric clears it.
    dialog.refmode_combo.setFocus()
    qtbot.keyClick(dialog.refmode_combo, Qt.Key.Key_Up)
    assert dialog.refmode_combo.currentData() == "source" and warning.isVisible()
    item = metric_item(dialog, reference_based[0])
    item.setCheckState(0, Qt.CheckState.Unchecked)
    assert not warning.isVisible()
    dialog.close()
