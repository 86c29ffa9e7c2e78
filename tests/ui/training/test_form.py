"""The training form describes the same request as `meaningbench train` does."""

from __future__ import annotations

import pytest

from meaningbench.cli import build_parser
from meaningbench.commands.train import build_request
from meaningbench.errors import UserError
from meaningbench.queries.training import request_summary
from meaningbench.training.request import TrainRequest
from meaningbench.ui.training.fields import parse_seeds
from meaningbench.ui.training.form import TrainingForm


def cli_request(*argv: str) -> TrainRequest:
    return build_request(build_parser().parse_args(["train", *argv]))


@pytest.fixture
def form(qtbot) -> TrainingForm:  # noqa: ANN001
    widget = TrainingForm(["meaning", "fluency"])
    qtbot.addWidget(widget)
    return widget


def test_the_untouched_form_is_the_command_line_default(form, tmp_path) -> None:
    study, out = tmp_path / "s.mbstudy", tmp_path / "model"
    form.out_dir.set_text(str(out))
    mine = form.request(study)
    theirs = cli_request(str(study), "--out", str(out))
    assert mine.learning_config() == theirs.learning_config()
    assert (mine.device, mine.threads, mine.name, mine.register) == ("auto", None, None, True)
    assert form.name.placeholderText() == "model"  # the registered name by default


def test_every_option_maps_to_its_command_line_flag(form, tmp_path) -> None:
    study, out, base = tmp_path / "s.mbstudy", tmp_path / "m2", tmp_path / "enc"
    f = form
    f.out_dir.set_text(str(out))
    f.base.set_value(str(base))
    f.dimension.setCurrentText("fluency")
    f.target.setCurrentIndex(1)
    f.augment["identical"].setChecked(False)
    f.augment["unrelated"].setChecked(False)
    f.epochs.setValue(3)
    f.lr.setValue(1e-4)
    f.batch.setValue(8)
    f.folds.setValue(3)
    f.seeds.setText("1, 2")
    f.max_length.setValue(256)
    f.eval_steps.setValue(10)
    f.checkpoint_steps.setValue(50)
    f.max_steps.setValue(40)
    f.split_seed.setValue(7)
    f.device.setCurrentIndex(f.device.findData("cpu"))
    f.threads.setValue(2)
    f.name.setText("mine")
    f.keep.setChecked(True)
    mine = f.request(study)
    theirs = cli_request(
        str(study), "--out", str(out), "--base", str(base), "--dimension", "fluency", "--z",
        "--augment", "swap", "--epochs", "3", "--lr", "1e-4", "--batch-size", "8",
        "--folds", "3", "--seeds", "1", "2", "--max-length", "256", "--eval-steps", "10",
        "--checkpoint-steps", "50", "--max-steps", "40", "--split-seed", "7",
        "--device", "cpu", "--threads", "2", "--name", "mine", "--keep-checkpoints",
    )  # fmt: skip
    assert mine == theirs
    # Shown again (a saved training's settings for a resume), the form gives them back.
    other = TrainingForm(["meaning"])
    other.out_dir.set_text(str(out))
    other.set_request(theirs)
    assert other.request(study) == theirs
    other.deleteLater()


def test_the_sanity_shares_are_the_command_lines(form, tmp_path) -> None:
    study, out = tmp_path / "s.mbstudy", tmp_path / "model"
    form.out_dir.set_text(str(out))
    identical, unrelated = form.identical_share, form.unrelated_share
    assert (identical.value(), unrelated.value()) == pytest.approx((0.6, 0.1))
    assert identical.isEnabled() and unrelated.isEnabled()
    identical.setValue(0.4)
    unrelated.setValue(0.25)
    mine = form.request(study)
    assert mine == cli_request(str(study), "--out", str(out), "--sanity-share", "0.4,0.25")
    assert "augmentation identical, unrelated, swap (sanity shares 0.4,0.25)" in (
        request_summary(mine)
    )
    unrelated.setValue(0.6)  # 0.4 + 0.6 leaves no room for the rated pairs
    with pytest.raises(UserError, match="at most 0.9 of the examples together"):
        form.request(study)
    # The identical share's minimum reads "one per source": the rule for both kinds.
    identical.setValue(identical.minimum())
    assert identical.text() == "one per source" and not unrelated.isEnabled()
    mine = form.request(study)
    assert mine == cli_request(str(study), "--out", str(out), "--sanity-share", "per-source")
    assert "(one per source)" in request_summary(mine)
    form.set_request(mine.with_changes(sanity_share=(0.7, 0.05)))  # a saved one, shown again
    assert form.request(study).sanity_share == (0.7, 0.05) and unrelated.isEnabled()
    # A share counts its kind of pair: without it the share cannot be set.
    form.augment["unrelated"].setChecked(False)
    assert identical.isEnabled() and not unrelated.isEnabled()
    form.augment["identical"].setChecked(False)
    assert not identical.isEnabled()
    form.augment["identical"].setChecked(True)
    form.augment["unrelated"].setChecked(True)
    form.set_locked(True)
    assert not identical.isEnabled() and not unrelated.isEnabled()
    form.set_locked(False)
    assert identical.isEnabled() and unrelated.isEnabled()


def test_locking_keeps_only_the_runtime_options_editable(form, tmp_path) -> None:
    form.set_locked(True)
    assert not form.epochs.isEnabled() and not form.base.isEnabled()
    assert not form.augment["swap"].isEnabled() and not form.seeds.isEnabled()
    assert form.device.isEnabled() and form.threads.isEnabled() and form.name.isEnabled()
    saved = TrainRequest(study=tmp_path / "a", out_dir=tmp_path / "o", epochs=5, name="old")
    form.out_dir.set_text(str(tmp_path / "o"))
    form.device.setCurrentIndex(form.device.findData("cpu"))
    resumed = form.apply_saved(saved, resume=True)
    assert resumed.learning_config() == saved.learning_config()
    assert (resumed.resume, resumed.device, resumed.name) == (True, "cpu", "old")
    form.set_locked(False)
    assert form.epochs.isEnabled()


def test_the_learning_rate_box_reads_and_steps_like_a_learning_rate(form) -> None:
    lr = form.lr
    assert lr.text() == "5e-05"
    lr.stepBy(1)
    assert lr.value() == pytest.approx(1e-4)
    lr.stepBy(-2)
    assert lr.value() == pytest.approx(2e-5)
    lr.setValue(3e-5)
    lr.stepBy(1)  # off the ladder: the next rung up
    assert lr.value() == pytest.approx(5e-5)
    lr.lineEdit().setText("3e-4")
    lr.interpretText()
    assert lr.value() == pytest.approx(3e-4)
    assert lr.text() == "0.0003"


def test_seeds_are_whole_numbers() -> None:
    assert parse_seeds("0") == (0,)
    assert parse_seeds(" 1, 2;3 ") == (1, 2, 3)
    for bad, words in (("", "at least one"), ("0 x", "whole numbers"), ("1 1", "differ")):
        with pytest.raises(UserError, match=words):
            parse_seeds(bad)


def test_bad_fields_are_refused_before_a_training_starts(form, tmp_path) -> None:
    with pytest.raises(UserError, match="output folder"):
        form.request(tmp_path / "s.mbstudy")
    form.out_dir.set_text(str(tmp_path / "m"))
    for box in form.augment.values():
        box.setChecked(False)
    form.folds.setValue(2)
    assert form.request(tmp_path / "s.mbstudy").folds == 2
    form.folds.setValue(1)  # the minimum reads "none": a hold-out split
    assert form.request(tmp_path / "s.mbstudy").folds is None
