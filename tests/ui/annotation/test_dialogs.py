"""The annotator picker and the annotation settings widget, against a real study file."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QDialog, QTabWidget
from sqlalchemy import select

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.db.models import Annotator, Dimension
from meaningbench.errors import UserError
from meaningbench.ui.annotation.picker import AnnotatorPicker
from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget


def test_picker_lists_profiles_with_progress(qtbot, study) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.next_item()
    sess.submit(item.item_id, {"meaning": 50})
    AnnotationSession(study, "bob")
    picker = AnnotatorPicker(study)
    qtbot.addWidget(picker)
    rows = [picker.list.item(i).text() for i in range(picker.list.count())]
    assert rows[0].startswith("alice") and "1 of 12 rated" in rows[0]
    assert rows[1].startswith("bob") and "0 of 12 rated" in rows[1]
    assert picker.selected_name() is None  # nobody is preselected: identity is never guessed
    picker.list.setCurrentRow(1)
    assert picker.selected_name() == "bob"
    picker.accept()
    assert picker.result() == QDialog.DialogCode.Accepted


def test_picker_new_name_and_refusals(qtbot, study) -> None:
    with study.session() as s:
        s.add(Annotator(name="mean-label", kind="aggregate"))
    picker = AnnotatorPicker(study)
    qtbot.addWidget(picker)
    assert picker.list.count() == 0 and picker.selected_name() is None
    picker.accept()
    assert picker.result() != QDialog.DialogCode.Accepted and picker.error.text()
    qtbot.keyClicks(picker.new_name, "mean-label")
    picker.accept()
    assert "imported labels" in picker.error.text()
    picker.new_name.clear()
    qtbot.keyClicks(picker.new_name, "  dana ")
    assert picker.selected_name() == "dana"
    picker.accept()
    assert picker.result() != QDialog.DialogCode.Accepted and picker.confirm.text()
    picker.accept()
    assert picker.result() == QDialog.DialogCode.Accepted
    with study.session() as s:  # the profile comes with its session, not with the picker
        assert s.scalar(select(Annotator).where(Annotator.name == "dana")) is None


def test_settings_widget_round_trip(qtbot, study) -> None:
    widget = AnnotationSettingsWidget(study)
    qtbot.addWidget(widget)
    shown = widget.settings()
    with study.session() as s:
        stored = load_settings(s)
    assert shown.qc == stored.qc and shown.seed == stored.seed
    # Change a bit of everything, as a study lead would.
    fluency_row = [d.name for d in shown.dimensions].index("fluency")
    widget.table.cellWidget(fluency_row, 0).setChecked(True)
    combo: QComboBox = widget.table.cellWidget(fluency_row, 2)
    combo.setCurrentIndex(combo.findData("likert"))
    widget.k_items.setChecked(True)
    widget.k.setValue(2)
    widget.pool.setValue(4)
    assert not widget.qc_spins["word_soup"].isEnabled()  # the fixture's study has QC off
    widget.qc_enabled.setChecked(True)
    widget.qc_spins["word_soup"].setValue(5)
    widget.highlight.setChecked(True)
    widget.back_to_back.setChecked(True)
    widget.seed.setValue(99)
    widget.guidelines.setPlainText("# New\n\nBe kind.")
    assert "New" in widget.preview.toPlainText()
    assert widget.normal_label.text() == "75 of 100"
    assert widget.apply()
    with study.session() as s:
        st = load_settings(s)
        fluency = s.scalar(select(Dimension).where(Dimension.name == "fluency"))
    assert (fluency.active, fluency.scale, fluency.max_value) == (True, "likert", 5.0)
    assert (st.overlap_k, st.pool_size, st.qc.word_soup, st.seed) == (2, 4, 5, 99)
    assert st.qc_enabled and st.diff_highlighting and st.same_source_back_to_back
    assert st.guidelines.startswith("# New")
    assert st.datasets is None  # all datasets checked


def test_settings_widget_shows_why_it_cannot_save(qtbot, study) -> None:
    widget = AnnotationSettingsWidget(study)
    qtbot.addWidget(widget)
    for spin in widget.qc_spins.values():
        spin.setValue(20)
    assert not widget.apply()
    assert "too many" in widget.error.text()
    with study.session() as s:
        assert load_settings(s).qc.word_soup == 0
    for r in range(widget.table.rowCount()):
        box: QCheckBox = widget.table.cellWidget(r, 0)
        box.setChecked(False)
    for spin in widget.qc_spins.values():
        spin.setValue(0)
    assert not widget.apply()
    assert "dimension" in widget.error.text()


def test_a_widget_with_one_section_leaves_the_others_alone(qtbot, study) -> None:
    widget = AnnotationSettingsWidget(study, sections=("queues",))
    qtbot.addWidget(widget)
    assert widget.findChild(QTabWidget) is None, "one section: no tabs"
    # Meanwhile another tab of the dialog changes the guidelines and a dimension.
    with study.session() as s:
        st = load_settings(s)
        st.guidelines = "# Theirs"
        st.dimensions[1].active = True
        save_settings(s, st)
    widget.seed.setValue(4242)
    widget.save()
    with study.session() as s:
        st = load_settings(s)
    assert st.seed == 4242
    assert st.guidelines == "# Theirs" and st.dimensions[1].active


def test_save_raises_for_a_dialog_to_show(qtbot, study) -> None:
    widget = AnnotationSettingsWidget(study)
    qtbot.addWidget(widget)
    widget.qc_enabled.setChecked(True)
    for spin in widget.qc_spins.values():
        spin.setValue(20)
    with pytest.raises(UserError, match="too many"):
        widget.save()
