"""Before Qt is loaded, the app says in one line why no window can open, and exits with 2.

The missing library is real: a stand-in for PySide6's xcb plugin is compiled here and linked
against a library that is then deleted (or that this system does not have), so `ldd` finds
it missing exactly as it finds libxcb-cursor.so.0 missing on a fresh Ubuntu desktop. The
stand-in sits in a PySide6 folder put first on PYTHONPATH, which only the check reaches:
the real commands run, and Qt is never loaded when the check refuses.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from meaningbench.desktop import (
    PACKAGES,
    XCB_PLUGIN,
    display_problem,
    missing_libraries,
    qt_platform,
    xcb_plugin,
)

EXE = shutil.which("meaningbench", path=str(Path(sys.executable).parent))
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")


def desktop_env(**values: str) -> dict[str, str]:
    """The environment of a desktop session: no display and no platform unless given."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE")
    }
    return {**env, **values}


def fake_pyside(folder: Path, needs: str) -> Path:
    """A PySide6 folder whose xcb plugin needs the library `needs` (a soname), which is not
    there: the library is built for the link and deleted."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "needed.c").write_text("int mb_needed(void) { return 1; }\n", encoding="utf-8")
    (folder / "plugin.c").write_text(
        "int mb_needed(void);\nint mb_plugin(void) { return mb_needed(); }\n", encoding="utf-8"
    )
    stub = folder / "libmbneeded.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", str(stub), f"-Wl,-soname,{needs}", "needed.c"],
        cwd=folder,
        check=True,
    )
    plugin = folder / "PySide6" / XCB_PLUGIN
    plugin.parent.mkdir(parents=True)
    (folder / "PySide6" / "__init__.py").write_text("", encoding="utf-8")
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", str(plugin), "plugin.c", f"-L{folder}", "-lmbneeded"],
        cwd=folder,
        check=True,
    )
    stub.unlink()
    return folder


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert EXE is not None
    return subprocess.run(
        [EXE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def assert_one_line_refusal(done: subprocess.CompletedProcess[str]) -> str:
    # 2 and a message, not Qt's abort (SIGABRT: -6, or 134 through a shell) and its plugin list
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "qt.qpa" not in done.stderr and "Aborted" not in done.stderr
    return lines[0]


@linux_only
@needs_cc
def test_a_missing_library_is_named_in_one_line(tmp_path: Path) -> None:
    fake = fake_pyside(tmp_path / "fake", "libmbabsent.so.1")
    env = desktop_env(DISPLAY=":93", PYTHONPATH=str(fake))
    line = assert_one_line_refusal(run(["gui"], env, tmp_path))
    assert line.startswith("meaningbench gui: error: ")
    assert "libmbabsent.so.1" in line and "not installed" in line
    # The module form and the packaged program's start (python -m meaningbench) say the same.
    done = subprocess.run(
        [sys.executable, "-m", "meaningbench"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "libmbabsent.so.1" in assert_one_line_refusal(done)


@linux_only
@needs_cc
def test_a_known_library_comes_with_the_apt_and_dnf_commands(tmp_path: Path) -> None:
    installed = subprocess.run(
        ["ldconfig", "-p"], capture_output=True, text=True, check=False
    ).stdout
    absent = [s for s in PACKAGES if f"{s} " not in installed]
    if not absent:
        pytest.skip("every library the xcb plugin may need is installed here")
    soname = absent[0]
    deb, rpm = PACKAGES[soname]
    fake = fake_pyside(tmp_path / "fake", soname)
    env = desktop_env(DISPLAY=":93", PYTHONPATH=str(fake))
    line = assert_one_line_refusal(run(["gui"], env, tmp_path))
    assert soname in line
    assert f"sudo apt install {deb} " in line and f"sudo dnf install {rpm} " in line


@linux_only
@needs_cc
def test_demo_refuses_before_it_builds_the_study(tmp_path: Path) -> None:
    # `make run` is `meaningbench demo`.
    fake = fake_pyside(tmp_path / "fake", "libmbabsent.so.1")
    study = tmp_path / "demo.mbstudy"
    env = desktop_env(DISPLAY=":93", PYTHONPATH=str(fake))
    line = assert_one_line_refusal(run(["demo", "--path", str(study)], env, tmp_path))
    assert line.startswith("meaningbench demo: error: ") and "libmbabsent.so.1" in line
    assert not study.exists()


@linux_only
def test_no_display_is_said_in_one_line(tmp_path: Path) -> None:
    for args in (["gui"], ["demo", "--path", str(tmp_path / "demo.mbstudy")]):
        line = assert_one_line_refusal(run(args, desktop_env(), tmp_path))
        assert "no display" in line and "DISPLAY" in line
    assert not (tmp_path / "demo.mbstudy").exists()
    # Built without a window, the demo needs no display.
    done = run(
        ["demo", "--no-gui", "--path", str(tmp_path / "demo.mbstudy")], desktop_env(), tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "demo.mbstudy").exists()


@linux_only
def test_with_every_library_installed_the_check_passes() -> None:
    plugin = xcb_plugin()
    assert plugin is not None and plugin.is_file(), "PySide6's xcb plugin"
    assert missing_libraries(plugin) == []
    assert display_problem({"DISPLAY": ":0"}) is None


@linux_only
@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs xvfb-run")
def test_when_the_check_passes_qt_opens_its_xcb_platform(tmp_path: Path) -> None:
    script = (
        "from meaningbench.desktop import require_display\n"
        "require_display()\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "print(app.platformName())\n"
    )
    done = subprocess.run(
        ["xvfb-run", "-a", sys.executable, "-c", script],
        env=desktop_env(QT_QPA_PLATFORM="xcb"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "xcb"


@pytest.mark.parametrize(
    ("env", "platform"),
    [
        ({}, "xcb"),
        ({"DISPLAY": ":0"}, "xcb"),
        ({"QT_QPA_PLATFORM": "offscreen"}, "offscreen"),
        ({"QT_QPA_PLATFORM": "xcb:dpi=96", "WAYLAND_DISPLAY": "wayland-0"}, "xcb"),
        ({"QT_QPA_PLATFORM": "wayland;xcb"}, "wayland"),
        ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "wayland"),
        ({"XDG_SESSION_TYPE": "wayland", "DISPLAY": ":0"}, "wayland"),
    ],
)
def test_the_platform_is_the_one_qt_tries_first(env: dict[str, str], platform: str) -> None:
    assert qt_platform(env) == platform


def test_no_check_where_no_display_server_is_used() -> None:
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}, system="linux") is None
    assert display_problem({"QT_QPA_PLATFORM": "minimal"}, system="linux") is None
    assert display_problem({}, system="win32") is None
    assert display_problem({}, system="darwin") is None
    # A Wayland session needs Qt's Wayland plugin, not the xcb one.
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}, system="linux") is None
    problem = display_problem({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "w"}, system="linux")
    assert problem is not None and "DISPLAY" in problem
