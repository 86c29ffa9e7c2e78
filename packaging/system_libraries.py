"""The system libraries the bundle links, and the Debian packages that provide them.

The .deb's Depends and Recommends and the portable archive's README are made from here.
The list of packages is written by hand (a soname and its package: `PACKAGES` below and
the X and Qt ones in meaningbench.desktop, which also names them when the window cannot
open), and it is checked against the bundle itself: every ELF file in it is read with
`readelf -d`, and each library it needs that the bundle does not carry must be in the list,
or the package is not built. So a library that a new release of PySide6 or torch starts to
link cannot go unnamed.

What the program needs to start its window on X11 (Python's extensions, torch, Qt's
libraries, the xcb platform plugin and its GL integration) becomes Depends. What only the
other Qt plugins need (Wayland, the GTK theme, EGL on the console, printing) becomes
Recommends: a desktop has them, and without them the program still runs on X11.

    python packaging/system_libraries.py dist/meaningbench      # what the bundle needs
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from meaningbench.desktop import PACKAGES as QT_PACKAGES

# soname -> Debian package, for the libraries outside the X/Qt list (bookworm's names; the
# same packages exist under these names in Ubuntu 22.04 and later).
PACKAGES: dict[str, str] = {
    "ld-linux-x86-64.so.2": "libc6",
    "libc.so.6": "libc6",
    "libm.so.6": "libc6",
    "libdl.so.2": "libc6",
    "libpthread.so.0": "libc6",
    "librt.so.1": "libc6",
    "libresolv.so.2": "libc6",
    "libutil.so.1": "libc6",
    "libcrypt.so.1": "libcrypt1",
    "libgcc_s.so.1": "libgcc-s1",
    "libstdc++.so.6": "libstdc++6",
    "libz.so.1": "zlib1g",
    "libzstd.so.1": "libzstd1",
    "libbz2.so.1.0": "libbz2-1.0",
    "liblzma.so.5": "liblzma5",
    "libffi.so.8": "libffi8",
    "libexpat.so.1": "libexpat1",
    "libuuid.so.1": "libuuid1",
    "libbrotlicommon.so.1": "libbrotli1",
    "libbrotlidec.so.1": "libbrotli1",
    "libgio-2.0.so.0": "libglib2.0-0",
    "libgobject-2.0.so.0": "libglib2.0-0",
    "libgmodule-2.0.so.0": "libglib2.0-0",
    "libharfbuzz.so.0": "libharfbuzz0b",
    "libpng16.so.16": "libpng16-16",
    "libdrm.so.2": "libdrm2",
    "libgbm.so.1": "libgbm1",
    "libinput.so.10": "libinput10",
    "libudev.so.1": "libudev1",
    "libmtdev.so.1": "libmtdev1",
    "libts.so.0": "libts0",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
    "libwayland-server.so.0": "libwayland-server0",
    "libgtk-3.so.0": "libgtk-3-0",
    "libgdk-3.so.0": "libgtk-3-0",
    "libatk-1.0.so.0": "libatk1.0-0",
    "libcairo.so.2": "libcairo2",
    "libcairo-gobject.so.2": "libcairo-gobject2",
    "libgdk_pixbuf-2.0.so.0": "libgdk-pixbuf-2.0-0",
    "libpango-1.0.so.0": "libpango-1.0-0",
    "libpangocairo-1.0.so.0": "libpangocairo-1.0-0",
    "libcups.so.2": "libcups2",
    "libgssapi_krb5.so.2": "libgssapi-krb5-2",
    "libXrender.so.1": "libxrender1",
    "libXext.so.6": "libxext6",
    "libXi.so.6": "libxi6",
    **{soname: debian for soname, (debian, _) in QT_PACKAGES.items()},
}

# Qt plugin folders the program needs on X11; every other plugin only makes Recommends.
REQUIRED_PLUGIN_FOLDERS = frozenset({"platforms/libqxcb.so", "xcbglintegrations", "imageformats"})


class UnknownLibraries(Exception):
    """The bundle needs system libraries that no package of the list provides."""


@dataclass(frozen=True)
class SystemNeeds:
    depends: list[str]  # Debian packages, sorted
    recommends: list[str]  # not also in depends
    sonames: dict[str, list[str]]  # soname -> bundle files that need it (relative paths)


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_files(bundle: Path, paths: list[Path] | None = None) -> list[Path]:
    """The bundle's ELF files (of `paths`, when the caller has listed the bundle already)."""
    paths = list(bundle.rglob("*")) if paths is None else paths
    return sorted(p for p in paths if p.is_file() and not p.is_symlink() and is_elf(p))


def needed_sonames(path: Path) -> list[str]:
    """The DT_NEEDED entries of one ELF file."""
    done = subprocess.run(
        ["readelf", "-d", "-W", str(path)], capture_output=True, text=True, check=False
    )
    names = []
    for line in done.stdout.splitlines():
        if "(NEEDED)" in line and "[" in line:
            names.append(line.split("[", 1)[1].rstrip("]").strip())
    return names


def is_plugin(relative: Path) -> bool:
    parts = relative.as_posix().split("/plugins/", 1)
    return len(parts) == 2 and "/Qt/" in f"/{parts[0]}/"


def is_root(relative: Path) -> bool:
    """Whether a file of the bundle is loaded by name when the program needs it: the
    programs, Python's extension modules and the Qt plugins of an X11 window (the
    libraries they link are loaded through them)."""
    if is_plugin(relative):
        plugin = relative.as_posix().split("/plugins/", 1)[1]
        return any(plugin == f or plugin.startswith(f + "/") for f in REQUIRED_PLUGIN_FOLDERS)
    return not relative.name.startswith("lib")


def system_needs(bundle: Path, known: dict[str, str] | None = None) -> SystemNeeds:
    """What the bundle's ELF files need from the system, as Debian packages; raises
    UnknownLibraries naming each library that the list does not map to a package.

    Depends: what the roots (is_root) need, directly or through the libraries the bundle
    carries. Recommends: what only the rest needs (Wayland, EGL on the console, the GTK
    theme: Qt's other plugins and the libraries only they link)."""
    known = PACKAGES if known is None else known
    listed = list(bundle.rglob("*"))  # one walk of the bundle's thousands of files
    files = elf_files(bundle, listed)
    carried = {p.name for p in listed}
    by_name = {p.name: p for p in files}
    needs = {p: needed_sonames(p) for p in files}
    sonames: dict[str, list[str]] = {}
    for path, names in needs.items():
        for soname in names:
            if soname not in carried:
                sonames.setdefault(soname, []).append(path.relative_to(bundle).as_posix())
    required: set[str] = set()
    seen: set[Path] = set()
    todo = [p for p in files if is_root(p.relative_to(bundle))]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for soname in needs[path]:
            if soname in by_name:
                todo.append(by_name[soname])
            elif soname not in carried:
                required.add(soname)
    unknown = sorted(s for s in sonames if s not in known)
    if unknown:
        lines = [f"  {s} (needed by {sonames[s][0]})" for s in unknown]
        raise UnknownLibraries(
            "the bundle needs system libraries that packaging/system_libraries.py does not "
            "name a Debian package for:\n" + "\n".join(lines)
        )
    depends = sorted({known[s] for s in required})
    recommends = sorted({known[s] for s in sonames} - set(depends))
    return SystemNeeds(depends=depends, recommends=recommends, sonames=sonames)


def apt_command(packages: Iterable[str]) -> str:
    return "sudo apt install " + " ".join(packages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    args = parser.parse_args(argv)
    try:
        needs = system_needs(args.bundle)
    except UnknownLibraries as e:
        print(e, file=sys.stderr)
        return 1
    print("Depends:", ", ".join(needs.depends))
    print("Recommends:", ", ".join(needs.recommends))
    return 0


if __name__ == "__main__":
    sys.exit(main())
