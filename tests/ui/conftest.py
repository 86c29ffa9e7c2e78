"""Fixtures for the window's tests: a main window on a private data folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.factories import Facts, populated_study


@pytest.fixture
def study_with_facts(tmp_path: Path) -> Iterator[tuple[Path, Facts]]:
    study, facts = populated_study(tmp_path / "pop.mbstudy")
    path = study.path
    study.close()
    yield path, facts


@pytest.fixture
def window(qtbot):  # noqa: ANN001, ANN201 - pytest-qt fixture
    from meaningbench.ui.launch import start

    win = start(None, open_initial=False)
    qtbot.addWidget(win)
    win.runner.show_error_dialogs = True
    yield win
    win.close()


def open_in(window, path: Path, qtbot) -> None:  # noqa: ANN001
    """Open a study in the window and wait until the browser has its rows."""
    assert window.studies.open_path(path)
    page = window.page("browser")
    qtbot.waitUntil(lambda: not page.model.loading and page.model.rowCount() > 0, timeout=10_000)
