"""The window keeps its width on a small screen whatever the runs are called: a sweep of a
local encoder in a long-named folder makes runs such as
"bertscore@/home/…/a-local-encoder…[layer=2,idf=…/corpus.txt]", and neither the sweep's
progress, nor its table and verdict, nor the sanity checks run on those runs afterwards
may widen the window past the screen (long names are shortened or wrapped instead)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from meaningbench.cli import main
from tests.conftest import FIXTURE_DATASETS
from tests.metrics.neural.conftest import minilm_path, tiny_encoder  # noqa: F401 - fixtures

SCREEN = (1024, 640)
LONG_FOLDER = "a-local-encoder-folder-with-a-long-and-descriptive-name-for-meaning-checks"


@pytest.fixture
def long_named(tmp_path: Path, tiny_encoder: str) -> tuple[Path, str, Path]:  # noqa: F811
    """A study of 30 rated pairs, an encoder copied under a long folder name, and an idf
    corpus with a long name."""
    study = tmp_path / "dev.mbstudy"
    assert main(["import", str(study), str(FIXTURE_DATASETS / "csmd" / "dev.tsv")]) == 0
    encoder = shutil.copytree(tiny_encoder, tmp_path / "encoders" / LONG_FOLDER)
    corpus = tmp_path / "corpora" / "simple_wikipedia_sentences_for_document_frequencies.txt"
    corpus.parent.mkdir()
    corpus.write_text("The cat sat on the mat.\nA dog ran in the park.\n", encoding="utf-8")
    return study, str(encoder), corpus


def minimum_widths(window) -> dict[str, int]:  # noqa: ANN001
    """The minimum width of the window and of each page it has made."""
    widths = {"window": window.minimumSizeHint().width()}
    for key in window.page_keys():
        page = window.existing_page(key)
        if page is not None:
            widths[key] = page.minimumSizeHint().width() + window.nav.width()
    return widths


class Widest:
    """The widest the window and its pages asked to be, watched while a job runs."""

    def __init__(self, window) -> None:  # noqa: ANN001
        self.window = window
        self.seen: dict[str, int] = {}

    def look(self) -> None:
        widths = {**minimum_widths(self.window), "actual": self.window.width()}
        for key, width in widths.items():
            self.seen[key] = max(width, self.seen.get(key, 0))

    def check(self) -> None:
        self.look()
        assert max(self.seen.values()) <= SCREEN[0], self.seen
        assert self.window.width() == SCREEN[0], self.seen


def assert_fits(window) -> None:  # noqa: ANN001
    Widest(window).check()


def sweep_in_window(window, qtbot, encoder: str, corpus: Path) -> None:  # noqa: ANN001
    """Run a real sweep from the Sweep page, checking the width while it runs."""
    assert window.show_page("sweep")
    page = window.page("sweep")
    page.models.setText(encoder)
    page.layers.setText("1-2")
    page.idf_file.setText(str(corpus))
    page.boot.setValue(50)
    assert page.start() is not None
    lines: set[str] = set()
    widest = Widest(window)

    def finished() -> bool:
        lines.add(page.status.text())
        widest.look()
        return page.job is None

    qtbot.waitUntil(finished, timeout=240_000)
    widest.check()
    assert page.table_data is not None, page.status.text()
    assert any(LONG_FOLDER in line for line in lines) or LONG_FOLDER in page.verdict.text()


def run_sanity(window, qtbot) -> None:  # noqa: ANN001
    from tests.ui.dashboard.conftest import wait_ready

    assert window.show_page("dashboard")
    dashboard = window.page("dashboard")
    wait_ready(qtbot, dashboard, timeout=60_000)
    for i in range(dashboard.tabs.count()):
        dashboard.tabs.setCurrentIndex(i)
        qtbot.wait(50)
        assert_fits(window)
    sanity = dashboard.sanity
    dashboard.tabs.setCurrentIndex(dashboard.tabs.indexOf(sanity))
    sanity.run()

    widest = Widest(window)

    def finished() -> bool:
        widest.look()
        return sanity.handle is None and sanity.shown is not None

    qtbot.waitUntil(finished, timeout=240_000)
    qtbot.wait(100)
    widest.check()


def test_long_run_names_never_widen_the_window(window, qtbot, long_named) -> None:  # noqa: ANN001
    from tests.ui.conftest import open_in

    study, encoder, corpus = long_named
    window.show()
    window.resize(*SCREEN)
    open_in(window, study, qtbot)
    for key in window.page_keys():
        assert window.show_page(key)
        qtbot.wait(50)
    assert_fits(window)
    sweep_in_window(window, qtbot, encoder, corpus)
    assert_fits(window)
    run_sanity(window, qtbot)
    assert_fits(window)
    for key in window.page_keys():
        assert window.show_page(key)
        qtbot.wait(50)
        assert_fits(window)


def test_a_long_job_line_is_shortened_in_the_status_bar(window, qtbot) -> None:  # noqa: ANN001
    import threading

    from meaningbench.runtime import JobContext

    release = threading.Event()
    name = "bertscore@/home/rater/" + LONG_FOLDER + "[layer=2,idf=/data/corpus.txt]"

    def job(ctx: JobContext) -> None:
        ctx.progress(0, None, f"Scoring {name} with a long configuration", force=True)
        release.wait(30)

    window.show()
    window.resize(*SCREEN)
    handle = window.runner.start(job, title="Run metrics")
    try:
        line = window.status.jobs.label
        qtbot.waitUntil(lambda: name in line.text(), timeout=10_000)
        qtbot.wait(50)
        assert_fits(window)
        assert line.width() < line.fontMetrics().horizontalAdvance(line.text())
        assert (
            line.toolTip()
            == line.text()
            == f"Run metrics: Scoring {name} with a long configuration"
        )
    finally:
        release.set()
    qtbot.waitUntil(lambda: handle.outcome is not None, timeout=10_000)
