"""Without the `app` extra (PySide6, pyqtgraph) the command line works, and the commands that
need Qt say in one line which install command adds it, exiting with 2.

The extra is made unimportable for real, in the child process that runs the command: a
`sitecustomize` module first on PYTHONPATH puts an import finder in front of the others
that refuses the app's libraries, so importing them fails as it does where they are not
installed. In the engine's own venv (`make test-engine`) they are absent anyway.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fault_tools import ROOT, assert_one_line_error

EXE = shutil.which("meaningbench", path=str(Path(sys.executable).parent))
INSTALL = "pip install 'meaningbench[app]'"

WITHOUT_APP = '''
import sys


class WithoutApp:
    """Refuses the desktop app's libraries, as an environment without them does."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("PySide6", "shiboken6", "pyqtgraph"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, WithoutApp())
'''


@pytest.fixture
def no_app(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that cannot import the app's libraries (and has no
    display: the missing extra is said first)."""
    site = tmp_path / "without-app"
    site.mkdir()
    (site / "sitecustomize.py").write_text(WITHOUT_APP, encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE")
    }
    return {**env, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_app_libraries_cannot_be_imported(no_app: dict[str, str], tmp_path: Path) -> None:
    for module in ("PySide6.QtWidgets", "pyqtgraph", "meaningbench.ui.launch"):
        done = run([sys.executable, "-c", f"import {module}"], no_app, tmp_path)
        assert done.returncode == 1, (module, done.stderr)
        assert "ModuleNotFoundError: No module named" in done.stderr, done.stderr


@pytest.mark.parametrize("form", ["gui", "python -m meaningbench"])
def test_opening_the_app_names_the_install_command(
    form: str, no_app: dict[str, str], tmp_path: Path
) -> None:
    assert EXE is not None
    args = [EXE, "gui"] if form == "gui" else [sys.executable, "-m", "meaningbench"]
    line = assert_one_line_error(run(args, no_app, tmp_path), INSTALL)
    prefix = "meaningbench gui: error: " if form == "gui" else "meaningbench: error: "
    assert line == f"{prefix}the desktop app needs PySide6 and pyqtgraph, which are not " + (
        f"installed; install the app extra: {INSTALL}"
    )


def test_demo_names_it_before_it_builds_the_study(no_app: dict[str, str], tmp_path: Path) -> None:
    # `make run` is `meaningbench demo`.
    assert EXE is not None
    study = tmp_path / "demo.mbstudy"
    line = assert_one_line_error(run([EXE, "demo", "--path", str(study)], no_app, tmp_path))
    assert line.startswith("meaningbench demo: error: the desktop app needs PySide6")
    assert line.endswith(INSTALL)
    assert not study.exists()


def test_the_command_line_works_without_the_app(no_app: dict[str, str], tmp_path: Path) -> None:
    assert EXE is not None
    study = tmp_path / "demo.mbstudy"
    built = run([EXE, "demo", "--no-gui", "--path", str(study)], no_app, tmp_path)
    assert built.returncode == 0, built.stderr
    assert built.stdout.strip() == str(study)
    info = run([EXE, "info", str(study), "--json"], no_app, tmp_path)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["items"] == 60


def test_a_png_plot_names_it_before_the_simulation(no_app: dict[str, str], tmp_path: Path) -> None:
    # Qt draws the PNG; the SVG needs nothing more, and the refusal comes before any work.
    assert EXE is not None
    plot = tmp_path / "plot.png"
    done = run([EXE, "simulate", "absent.mbstudy", "--out", str(plot)], no_app, tmp_path)
    line = assert_one_line_error(done, f"--out {plot}: a PNG plot", "needs PySide6,", INSTALL)
    assert "pyqtgraph" not in line
    assert not plot.exists()
