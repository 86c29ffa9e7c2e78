"""The dialog offers the bi-encoder kind and its rating mapping table: the form says what a
map does or what is wrong with it, describes the same request as `train --kind bi-encoder`,
and a training from the dialog registers the model as both battery metrics."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from meaningbench.cli import build_parser
from meaningbench.commands.train import build_request
from meaningbench.errors import UserError
from meaningbench.training.labels import OPUSPARCUS
from meaningbench.ui.training.form import TrainingForm

from .conftest import use_tiny_model, wait_idle


@pytest.fixture
def form(qtbot) -> TrainingForm:  # noqa: ANN001
    widget = TrainingForm(["meaning"])
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _choose_kind(form: TrainingForm, kind: str) -> None:
    form.kind.setCurrentIndex(form.kind.findData(kind))


def test_the_kind_brings_its_label_map_and_defaults(form, qtbot, tmp_path) -> None:
    study, out = tmp_path / "s.mbstudy", tmp_path / "m"
    form.out_dir.set_text(str(out))
    assert form.label_map.isHidden()  # a cross-encoder learns 0–100: no map
    assert form.augment["swap"].isChecked()
    _choose_kind(form, "bi-encoder")
    assert form.label_map.isVisible()
    assert not any(box.isChecked() for box in form.augment.values())
    assert "sbert_cosine@NAME and bertscore@NAME" in form.name.toolTip()
    # Untouched, the bi-encoder form is `train --kind bi-encoder` (linear rescaling).
    theirs = build_request(
        build_parser().parse_args(["train", str(study), "--out", str(out), "--kind", "bi-encoder"])
    )
    assert form.request(study).learning_config() == theirs.learning_config()
    assert "Linear" in form.label_map.status.text()

    # The Opusparcus button fills in the study's table; the line below reads it back.
    qtbot.mouseClick(form.label_map.opusparcus, Qt.MouseButton.LeftButton)
    assert form.label_map.edit.text() == OPUSPARCUS
    assert form.label_map.status.text().startswith(
        "7 ratings mapped (exact: only the listed ratings): 4 → 0.85, 3.5 → 0.7"
    )
    theirs = build_request(
        build_parser().parse_args(
            ["train", str(study), "--out", str(out), "--kind", "bi-encoder",
             "--label-map", OPUSPARCUS]
        )
    )  # fmt: skip
    assert form.request(study).learning_config() == theirs.learning_config()

    # A bad entry is said under the field as it is typed, and the form refuses to start.
    form.label_map.edit.setText("4=0.85,3.5=7")
    assert "the target 7 is outside 0–1" in form.label_map.status.text()
    assert form.label_map.status.property("role") == "error"
    with pytest.raises(UserError, match="the target 7 is outside 0–1"):
        form.request(study)
    # Back to the cross-encoder: the map is hidden and not part of the request.
    _choose_kind(form, "cross-encoder")
    assert form.label_map.isHidden() and form.request(study).label_map is None
    assert form.augment["swap"].isChecked()


def test_the_table_can_be_read_linearly_between_its_rows(form, qtbot, tmp_path) -> None:
    from meaningbench.queries.training import request_summary

    study, out = tmp_path / "s.mbstudy", tmp_path / "m"
    form.out_dir.set_text(str(out))
    _choose_kind(form, "bi-encoder")
    between = form.label_map.linear_between
    # Linear rescaling has no rows to read between: the box waits for a table.
    assert between.isVisible() and not between.isEnabled()
    assert "exact" in between.toolTip() and "outside the listed range" in between.toolTip()
    table = "0=0,25=0.15,50=0.4,75=0.7,100=0.95"
    form.label_map.edit.setText(table)
    assert between.isEnabled() and not between.isChecked()
    assert form.request(study).label_between == "exact"
    qtbot.mouseClick(between, Qt.MouseButton.LeftButton)
    assert between.isChecked()
    assert form.label_map.status.text().startswith(
        "5 ratings mapped (linear between the listed ratings, none beyond them): 100 → 0.95, 75 → 0.7"
    )
    # Ticked, the form is `--label-between linear`, and says so in its summary.
    theirs = build_request(
        build_parser().parse_args(
            ["train", str(study), "--out", str(out), "--kind", "bi-encoder",
             "--label-map", table, "--label-between", "linear"]
        )
    )  # fmt: skip
    mine = form.request(study)
    assert mine.learning_config() == theirs.learning_config()
    assert mine.label_between == "linear"
    summary = request_summary(mine)  # the table as --label-map writes it, highest first
    assert "ratings → cosine 100=0.95,75=0.7,50=0.4,25=0.15,0=0 (linear between)" in summary
    # With the table emptied the box cannot apply: the request rescales linearly, exactly.
    form.label_map.edit.setText("")
    assert not between.isEnabled()
    emptied = form.request(study)
    assert emptied.label_map is None and emptied.label_between == "exact"
    assert "(linear between)" not in request_summary(emptied)


def test_a_saved_bi_encoder_request_shows_as_it_was(form, tmp_path) -> None:
    from meaningbench.training.labels import parse_label_map
    from meaningbench.training.request import TrainRequest

    saved = TrainRequest(
        study=tmp_path, out_dir=tmp_path / "m", kind="bi-encoder",
        label_map=parse_label_map("4=0.9,1=0.1"), augment=("unrelated",),
        label_between="linear",
    )  # fmt: skip
    form.set_request(saved)
    form.set_locked(True)
    assert form.kind.currentData() == "bi-encoder" and not form.kind.isEnabled()
    assert form.label_map.edit.text() == "4=0.9,1=0.1" and not form.label_map.isEnabled()
    assert form.label_map.linear_between.isChecked()
    assert [n for n, b in form.augment.items() if b.isChecked()] == ["unrelated"]


def test_the_dialog_trains_a_bi_encoder(open_dialog, cue_path, tiny_encoder, qtbot) -> None:
    from meaningbench.jobs.metric_listing import list_metrics

    dialog = open_dialog(cue_path)
    _choose_kind(dialog.form, "bi-encoder")
    use_tiny_model(dialog, tiny_encoder, epochs=1)
    dialog.form.max_steps.setValue(3)
    dialog.form.name.setText("cue-bi")
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    handle = dialog.job
    assert handle is not None
    wait_idle(qtbot, dialog)
    assert handle.outcome == "done", handle.failure and handle.failure.trace
    card = dialog.trained.card
    assert card["kind"] == "bi-encoder" and card["mapping"]["kind"] == "linear"
    text = dialog.card.registered.text()
    assert "sbert_cosine@cue-bi" in text and "bertscore@cue-bi" in text
    shown = {row.label: row.value for row in dialog.card.rows}
    assert shown["Before training"] == f"r {card['test_before']['pearson']:.3f}"
    offered = {m.name: m for m in list_metrics(cue_path)}
    assert offered["sbert_cosine@cue-bi"].available is True
    assert offered["bertscore@cue-bi"].available is True


def test_the_proposed_folder_follows_the_kind(open_dialog, cue_path, tmp_path) -> None:
    dialog = open_dialog(cue_path)
    form = dialog.form
    assert form.out_dir.text().endswith("cue-meaningbert")
    _choose_kind(form, "bi-encoder")
    assert form.out_dir.text().endswith("cue-sbert")
    assert form.name.placeholderText() == "cue-sbert"
    form.out_dir.set_text(str(tmp_path / "mine"))  # the user's own choice is kept
    _choose_kind(form, "cross-encoder")
    assert form.out_dir.text() == str(tmp_path / "mine")
