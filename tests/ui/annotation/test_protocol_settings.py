"""The study lead picks the protocol in the settings widget; a rated study keeps its own."""

from __future__ import annotations

from meaningbench.annotation.protocols import study_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget


def test_the_protocol_is_chosen_and_stored_from_the_settings(qtbot, study) -> None:
    widget = AnnotationSettingsWidget(study)
    qtbot.addWidget(widget)
    assert widget.protocol.currentData() == "da"
    widget.protocol.setCurrentIndex(widget.protocol.findData("esa"))
    widget.hidden_number.setChecked(True)
    widget.source_spans.setChecked(True)
    assert widget.apply()
    choice = study_protocol(study)
    assert (choice.protocol, choice.hidden_number, choice.source_spans) == ("esa", True, True)
    again = AnnotationSettingsWidget(study)
    qtbot.addWidget(again)
    assert again.protocol.currentData() == "esa" and again.hidden_number.isChecked()


def test_a_rated_study_refuses_another_protocol_and_says_why(qtbot, study) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.next_item()
    sess.submit(item.item_id, {"meaning": 50})
    widget = AnnotationSettingsWidget(study)
    qtbot.addWidget(widget)
    widget.protocol.setCurrentIndex(widget.protocol.findData("likert"))
    assert not widget.apply()
    assert "can no longer change to 'likert'" in widget.error.text()
    assert study_protocol(study).protocol == "da"
