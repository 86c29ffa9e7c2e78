"""Fixtures for the training dialog's tests: the tiny encoder and rated studies of the
training tests, and a dialog on its own StudyContext (no main window needed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.training.conftest import add_rated_items, cue_rows, tiny_encoder

__all__ = ["tiny_encoder"]  # a session fixture shared with tests/training


@pytest.fixture
def cue_path(tmp_path: Path) -> Path:
    """30 sources × 3 outputs whose rating a tiny encoder learns in a few dozen steps."""
    from meaningbench.db.study import create_study

    study = create_study(tmp_path / "cue.mbstudy")
    try:
        with study.session() as s:
            add_rated_items(s, cue_rows(30))
    finally:
        study.close()
    return tmp_path / "cue.mbstudy"


@pytest.fixture
def open_dialog(qtbot) -> Iterator[Callable]:  # noqa: ANN001
    """`open_dialog(path)` → a shown TrainingDialog on a study opened from `path`."""
    from meaningbench.db.study import open_study
    from meaningbench.ui.context import StudyContext
    from meaningbench.ui.training.dialog import TrainingDialog

    made = []

    def make(path: Path):  # noqa: ANN202
        context = StudyContext()
        context.runner.show_error_dialogs = False
        context.set_study(open_study(path))
        dialog = TrainingDialog(context)
        qtbot.addWidget(dialog)
        dialog.show()
        made.append((context, dialog))
        return dialog

    yield make
    for context, dialog in made:
        context.runner.cancel_all()
        context.runner.wait(60_000)
        dialog.close()
        context.set_study(None)


def use_tiny_model(dialog, encoder: Path, **values) -> None:  # noqa: ANN001
    """Fill the form as a user would for the tiny encoder (fast on one thread)."""
    form = dialog.form
    settings = dict(epochs=8, lr=3e-3, batch=16, augment=(), threads=1, eval_steps=0)
    settings.update(values)
    form.base.set_value(str(encoder))
    form.epochs.setValue(settings["epochs"])
    form.lr.setValue(settings["lr"])
    form.batch.setValue(settings["batch"])
    for name, box in form.augment.items():
        box.setChecked(name in settings["augment"])
    form.threads.setValue(settings["threads"])
    form.eval_steps.setValue(settings["eval_steps"])
    if "checkpoint_steps" in settings:
        form.checkpoint_steps.setValue(settings["checkpoint_steps"])


def wait_idle(qtbot, dialog, timeout: int = 90_000) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: not dialog.running, timeout=timeout)
