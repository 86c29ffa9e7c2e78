"""Fixtures for the dashboard's tests: small real studies and a dashboard page on them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.dashboard.studies import Synthetic, synthetic_study


@pytest.fixture
def synth(tmp_path: Path) -> tuple[Path, Synthetic]:
    study, facts = synthetic_study(
        tmp_path / "synth.mbstudy", n_items=80, n_metrics=4, n_raters=3, rated_share=0.8
    )
    path = study.path
    study.close()
    return path, facts


def ready(page) -> bool:  # noqa: ANN001
    """Loaded, with intervals and rater QC for the data as it is now, nothing running."""
    c = page.controller
    return (
        c.state.loaded
        and c.boot is not None
        and c.qc is not None
        and not c.busy
        and c.boot_version == c.version
    )


def wait_ready(qtbot, page, timeout: int = 30_000) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: ready(page), timeout=timeout)


@pytest.fixture
def open_page(qtbot) -> Iterator:  # noqa: ANN001
    """`open_page(path)` → a shown DashboardPage on its own StudyContext, loaded."""
    from meaningbench.db.study import open_study
    from meaningbench.ui.context import StudyContext
    from meaningbench.ui.dashboard import DashboardPage

    made = []

    def make(path: Path, *, wait: bool = True):  # noqa: ANN202
        context = StudyContext()
        context.runner.show_error_dialogs = False
        context.set_study(open_study(path))
        page = DashboardPage(context)
        qtbot.addWidget(page)
        page.resize(1300, 850)
        page.show()
        made.append((context, page))
        if wait:
            wait_ready(qtbot, page)
        return page

    yield make
    for context, page in made:
        page.shutdown()
        context.runner.wait(10_000)
        context.set_study(None)
