"""Test set-up: Qt offscreen before any QApplication exists, a private data folder, and the
`gui` mark on the tests that need the desktop app's libraries (the `app` extra)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import gc  # noqa: E402
import gzip  # noqa: E402
import importlib.util  # noqa: E402
import shutil  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from meaningbench.desktop import missing_app_modules  # noqa: E402 - imports no Qt

# Public rating data shipped with the tests (see tests/fixtures/datasets/ATTRIBUTION.md).
FIXTURE_DATASETS = Path(__file__).resolve().parent / "fixtures" / "datasets"
# The full public data beside the project, for benchmarks and recipes only.
SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


# The tests that need the desktop app's libraries (PySide6, pyqtgraph: the `app` extra), by
# node id prefix: folders, files, single tests. Each is marked `gui`, as is every test that
# uses pytest-qt's qtbot; `make test` runs the others in a venv without the extra.
# There, the folders and files listed are not even collected (their modules import Qt when
# they load), and a `gui` test elsewhere is skipped.
GUI_TESTS = (
    "tests/ui/",
    # The desktop bundle, the .deb and the archive: the app is what they package.
    "tests/packaging/",
    "tests/db/test_study_app_faults.py",
    # The display check runs after the check that the app is installed.
    "tests/commands/test_desktop_check.py",
    "tests/analysis/test_selection_sim.py::test_simulate_command_writes_json_and_plots",
)
HAS_APP = not missing_app_modules()
TESTS = Path(__file__).resolve().parent
collect_ignore = (
    []
    if HAS_APP
    else [
        str(TESTS.parent / prefix)
        for prefix in GUI_TESTS
        if "::" not in prefix and (TESTS.parent / prefix).exists()
    ]
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    without_app = pytest.mark.skip(reason="needs the app extra: pip install 'meaningbench[app]'")
    for item in items:
        if item.nodeid.startswith("tests/benchmarks/"):
            item.add_marker(pytest.mark.timeout(0))  # measured runs take what they take
        if item.nodeid.startswith(GUI_TESTS) or "qtbot" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.gui)
        if not HAS_APP and item.get_closest_marker("gui") is not None:
            item.add_marker(without_app)


# A wait that ends in a blink on an idle machine can take minutes beside CPU burners: a job's
# child process, spawned, imports its libraries at a tenth of the speed. Every qtbot wait is
# stretched by this factor, which costs nothing where the wait succeeds.
WAIT_PATIENCE = float(os.environ.get("MEANINGBENCH_TEST_PATIENCE", "5"))


def pytest_configure(config: pytest.Config) -> None:
    if importlib.util.find_spec("pytestqt") is None:
        return  # the engine's venv: no Qt, no qtbot to make patient
    from pytestqt.qtbot import QtBot

    until, signal, signals = QtBot.waitUntil, QtBot.waitSignal, QtBot.waitSignals

    def wait_until(self: QtBot, callback: object, *, timeout: int = 5000) -> None:
        until(self, callback, timeout=round(timeout * WAIT_PATIENCE))

    def wait_signal(self: QtBot, *args: object, timeout: int = 5000, **kw: object) -> object:
        return signal(self, *args, timeout=round(timeout * WAIT_PATIENCE), **kw)

    def wait_signals(self: QtBot, *args: object, timeout: int = 5000, **kw: object) -> object:
        return signals(self, *args, timeout=round(timeout * WAIT_PATIENCE), **kw)

    QtBot.waitUntil = wait_until
    QtBot.waitSignal = wait_signal
    QtBot.waitSignals = wait_signals


@pytest.fixture(autouse=True)
def _garbage_collected_on_the_gui_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """A Qt test collects its garbage on the GUI thread, as the app does
    (meaningbench.ui.gui_thread_gc), and once more after its widgets are closed: a wrapper
    left in a cycle and freed later on some job's worker thread can crash the process."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    from meaningbench.ui.gui_thread_gc import collect_on_gui_thread

    collect_on_gui_thread(request.getfixturevalue("qapp"))
    yield  # torn down after qtbot, which closes the test's widgets
    from PySide6.QtCore import QCoreApplication, QEvent

    for _ in range(2):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QCoreApplication.processEvents()
        gc.collect()


@pytest.fixture(autouse=True)
def _private_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("mbhome")
    monkeypatch.setenv("MEANINGBENCH_HOME", str(home))
    return home


def unpack_datasets(dest: Path) -> Path:
    """The fixture datasets in `dest`, with the gzip-compressed files decompressed."""
    for src in FIXTURE_DATASETS.rglob("*"):
        if not src.is_file():
            continue
        target = dest / src.relative_to(FIXTURE_DATASETS)
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".gz":
            with gzip.open(src, "rb") as fin, target.with_suffix("").open("wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copyfile(src, target)
    return dest


@pytest.fixture(scope="session")
def shared_datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The public rating data (CSMD, SimpDA 2022, QuestEval) laid out as in ../shared/datasets."""
    return unpack_datasets(tmp_path_factory.mktemp("datasets"))


@pytest.fixture
def new_study(tmp_path: Path):
    from meaningbench.db.study import create_study

    study = create_study(tmp_path / "test.mbstudy")
    yield study
    study.close()
