"""The study lead picks a selection strategy and the metric runs it reads in the settings."""

from __future__ import annotations

from PySide6.QtCore import Qt
from sqlalchemy import select

from meaningbench.annotation.protocols import study_protocol
from meaningbench.db.models import Item
from tests.analysis.studybuild import add_scores


def _score(study, metric: str, step: float) -> None:
    with study.session() as s:
        ids = list(s.scalars(select(Item.id).order_by(Item.id)))
    add_scores(study, metric, {i: (k * step) % 1.0 for k, i in enumerate(ids)})


def test_the_selection_is_chosen_and_stored_from_the_settings(qtbot, study) -> None:
    from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget

    _score(study, "bleu", 0.13)
    _score(study, "chrf", 0.29)
    widget = AnnotationSettingsWidget(study, sections=("queues",))
    qtbot.addWidget(widget)
    assert widget.selection.currentData() == "random"
    assert not widget.selection_list.isEnabled()  # random reads no score
    labels = [widget.selection_list.item(i).text() for i in range(widget.selection_list.count())]
    assert labels == ["bleu", "chrf"]
    widget.selection.setCurrentIndex(widget.selection.findData("disagreement"))
    assert widget.selection_list.isEnabled()
    widget.selection_list.item(1).setCheckState(Qt.CheckState.Unchecked)
    assert widget.apply()
    choice = study_protocol(study)
    assert (choice.selection, choice.selection_metrics) == ("disagreement", ("bleu",))
    again = AnnotationSettingsWidget(study, sections=("queues",))
    qtbot.addWidget(again)
    assert again.selection.currentData() == "disagreement"
    states = [again.selection_list.item(i).checkState() for i in range(2)]
    assert states == [Qt.CheckState.Checked, Qt.CheckState.Unchecked]
    # All checked again: every finished run, later ones included.
    again.selection_list.item(1).setCheckState(Qt.CheckState.Checked)
    assert again.apply()
    assert study_protocol(study).selection_metrics is None


def test_no_run_checked_is_refused_with_the_reason(qtbot, study) -> None:
    from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget

    _score(study, "bleu", 0.13)
    widget = AnnotationSettingsWidget(study, sections=("queues",))
    qtbot.addWidget(widget)
    widget.selection.setCurrentIndex(widget.selection.findData("variance"))
    widget.selection_list.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert not widget.apply()
    assert "at least one metric run" in widget.error.text()
    # Unticking every run is what was refused: the reason must not offer it ("none for all").
    assert "none for all" not in widget.error.text() and "or all of them" in widget.error.text()
    assert study_protocol(study).selection == "random"


def test_balanced_is_offered_and_reads_no_score(qtbot, study) -> None:
    from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget

    _score(study, "bleu", 0.13)
    widget = AnnotationSettingsWidget(study, sections=("queues",))
    qtbot.addWidget(widget)
    widget.selection.setCurrentIndex(widget.selection.findData("balanced"))
    assert "the systems in turn" in widget.selection.currentText()
    assert not widget.selection_list.isEnabled()  # the systems, not the scores
    assert widget.apply()
    choice = study_protocol(study)
    assert choice.selection == "balanced" and "scores of" not in choice.selection_line()
