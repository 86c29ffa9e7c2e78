"""Whether Qt can open a window here, asked before Qt is loaded, and the app's start.

The desktop app's libraries (PySide6, pyqtgraph) are an extra of the package, `app`:
`pip install meaningbench` is the engine and the command line alone. Where they are not
installed, the commands that open a window say so in one line, with the command that
installs them, instead of a traceback.

On Linux, PySide6's xcb platform plugin (the X11 one) links system libraries that a fresh
desktop may lack: libxcb-cursor0, which PySide6 6.5 and later need, is not installed by
default on several Ubuntu releases. Qt then aborts with a core dump and a list of
plugins. Here `ldd` lists the plugin's libraries that the loader cannot find (every one of
them, not only the first a load would stop at) in a child process, without loading Qt,
and the user gets one line naming them and the command that installs them. Nothing is
cached: a library installed since the last start is found at the next one.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from meaningbench.errors import UserError

# The libraries Qt's xcb plugin loads (directly or through Qt's own libraries), by soname:
# (Debian and Ubuntu package, Fedora package).
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    # Fedora ships the protocol libraries of libxcb in one package.
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
}

# Where PySide6 keeps the plugin (and where the PyInstaller bundle puts it).
XCB_PLUGIN = Path("Qt", "plugins", "platforms", "libqxcb.so")
LDD_TIMEOUT_S = 30.0  # ldd takes milliseconds; only a machine under heavy load is slower


# The top-level modules of the `app` extra (pyproject.toml), and the command that adds them.
APP_MODULES = ("PySide6", "pyqtgraph")
APP_INSTALL = "pip install 'meaningbench[app]'"


class DisplayUnavailable(UserError):
    """Qt could not open a window here: no display, or its platform plugin cannot load."""


class AppNotInstalled(UserError):
    """The desktop app's libraries (the `app` extra) are not installed here."""


def missing_app_modules(modules: Sequence[str] = APP_MODULES) -> list[str]:
    """The modules of the `app` extra that cannot be imported here, found without
    importing them."""
    missing = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except ImportError:  # a finder that refuses the module: it cannot be imported
            found = False
        if not found:
            missing.append(name)
    return missing


def require_app(purpose: str = "the desktop app", modules: Sequence[str] = APP_MODULES) -> None:
    """Raise AppNotInstalled, in one line naming the install command, where the modules
    of the `app` extra that `purpose` needs are missing."""
    missing = missing_app_modules(modules)
    if missing:
        names = " and ".join(missing)
        are = "is" if len(missing) == 1 else "are"
        raise AppNotInstalled(
            f"{purpose} needs {names}, which {are} not installed; install the app extra: "
            f"{APP_INSTALL}"
        )


def qt_platform(env: Mapping[str, str]) -> str:
    """The platform plugin Qt 6 tries first on Linux: QT_QPA_PLATFORM's first entry, else
    Wayland in a Wayland session, else xcb (Qt's default)."""
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return chosen.split(";")[0].split(":")[0].strip()
    if env.get("WAYLAND_DISPLAY") or env.get("XDG_SESSION_TYPE") == "wayland":
        return "wayland"
    return "xcb"


def xcb_plugin() -> Path | None:
    """PySide6's xcb plugin, found without importing PySide6; None where it is not there."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        plugin = Path(folder, XCB_PLUGIN)
        if plugin.is_file():
            return plugin
    return None


def missing_libraries(library: Path) -> list[str] | None:
    """The sonames a library needs, directly or through others, that the loader cannot
    find; None where that cannot be told (no ldd, ldd failed), so that Qt is left to try."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return None
    try:
        done = subprocess.run(
            [ldd, str(library)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=LDD_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    missing = []
    for line in done.stdout.splitlines():
        name, arrow, where = line.strip().partition("=>")
        if arrow and where.strip() == "not found" and name.strip() not in missing:
            missing.append(name.strip())
    return missing


def install_hint(sonames: Sequence[str]) -> str:
    """The commands that install the packages holding these libraries."""
    known = [PACKAGES[s] for s in sonames if s in PACKAGES]
    if len(known) < len(sonames):
        if len(sonames) == 1:
            return "install the package of your distribution that provides it"
        return "install the packages of your distribution that provide them"
    apt = " ".join(dict.fromkeys(deb for deb, _ in known))
    dnf = " ".join(dict.fromkeys(rpm for _, rpm in known))
    return (
        f"install with: sudo apt install {apt} (Debian, Ubuntu) or sudo dnf install {dnf} (Fedora)"
    )


def display_problem(
    env: Mapping[str, str] | None = None, *, system: str | None = None
) -> str | None:
    """Why Qt could not open a window here, in one line; None where nothing is known to be
    in its way."""
    env = os.environ if env is None else env
    if not (system or sys.platform).startswith("linux"):
        return None
    platform = qt_platform(env)
    if platform not in ("xcb", "wayland"):
        return None  # offscreen, minimal, vnc, eglfs...: no display server needed
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return (
            "no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set): "
            "start it in a desktop session, or under xvfb-run; the other commands need "
            "no display"
        )
    if platform != "xcb":
        return None
    if not env.get("DISPLAY"):
        return "QT_QPA_PLATFORM=xcb needs an X display, and DISPLAY is not set"
    plugin = xcb_plugin()
    missing = missing_libraries(plugin) if plugin is not None else None
    if not missing:
        return None
    names = ", ".join(missing)
    which = "which is" if len(missing) == 1 else "which are"
    return (
        f"the window cannot open: Qt's X11 plugin needs {names}, {which} not installed; "
        f"{install_hint(missing)}"
    )


def require_display() -> None:
    """Raise AppNotInstalled or DisplayUnavailable, with the one line, before Qt is loaded
    (where it would fail to import, or abort)."""
    require_app()
    problem = display_problem()
    if problem is not None:
        raise DisplayUnavailable(problem)


def open_app(argv: list[str] | None = None) -> int:
    """Run the desktop app on the study in argv (if any) until its window closes."""
    require_display()
    # Imported here: the check runs before Qt is loaded.
    from meaningbench.ui.launch import launch

    return int(launch(argv) or 0)
