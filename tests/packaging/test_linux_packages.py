"""`make deb` and `make dist` (packaging/debian_package.py, portable_archive.py) and the list
of system libraries both take their Depends from (system_libraries.py).

The bundles here are small folders built from real files: PySide6's own xcb and GTK plugins
(the files a real bundle carries) and the system's /bin/true, so the library list is checked
against what Qt really links, and the .deb is read back with dpkg-deb.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
pytestmark = pytest.mark.skipif(
    not (shutil.which("readelf") and shutil.which("dpkg-deb")),
    reason="needs readelf (binutils) and dpkg-deb (dpkg)",
)


@pytest.fixture(scope="module")
def modules():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(PACKAGING))
    try:
        yield (
            importlib.import_module("system_libraries"),
            importlib.import_module("debian_package"),
            importlib.import_module("portable_archive"),
        )
    finally:
        sys.path.remove(str(PACKAGING))


def _qt_plugins() -> Path:
    import PySide6

    return Path(PySide6.__file__).parent / "Qt" / "plugins"


def _plugin(bundle: Path, relative: str) -> None:
    """Copy a real Qt plugin into the bundle, with stand-ins for the Qt libraries it links
    (the bundle carries those, so they are not the system's)."""
    source = _qt_plugins() / relative
    if not source.is_file():
        pytest.skip(f"this PySide6 has no {relative}")
    qt = bundle / "_internal" / "PySide6" / "Qt"
    target = qt / "plugins" / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    done = subprocess.run(["readelf", "-d", "-W", str(source)], capture_output=True, text=True)
    (qt / "lib").mkdir(parents=True, exist_ok=True)
    for line in done.stdout.splitlines():
        if "(NEEDED)" in line and "libQt6" in line:
            (qt / "lib" / line.split("[", 1)[1].rstrip("]")).write_bytes(b"")


def _bundle(root: Path) -> Path:
    bundle = root / "meaningbench"
    bundle.mkdir()
    program = bundle / "MeaningBench"
    program.write_text('#!/bin/sh\necho "meaningbench 0.0-test $*"\n')
    program.chmod(0o755)
    (bundle / "meaningbench").symlink_to("MeaningBench")
    (bundle / "_internal").mkdir()
    shutil.copyfile("/bin/true", bundle / "_internal" / "helper")
    _plugin(bundle, "platforms/libqxcb.so")
    return bundle


def test_the_list_covers_what_the_xcb_plugin_links_and_splits_depends_from_recommends(
    modules, tmp_path: Path
) -> None:
    system_libraries, _, _ = modules
    bundle = _bundle(tmp_path)
    _plugin(bundle, "platformthemes/libqgtk3.so")
    needs = system_libraries.system_needs(bundle)
    # What the window needs on X11 is a dependency: the plugin's xcb libraries, and libc
    # of every program.
    for package in ("libxcb-cursor0", "libxcb-icccm4", "libxkbcommon-x11-0", "libc6"):
        assert package in needs.depends
    # The GTK theme is only recommended: the program runs on X11 without it.
    assert "libgtk-3-0" in needs.recommends
    assert "libgtk-3-0" not in needs.depends
    assert needs.sonames["libxcb-cursor.so.0"] == [
        "_internal/PySide6/Qt/plugins/platforms/libqxcb.so"
    ]
    # The bundle's own Qt libraries are never asked of the system.
    assert not [s for s in needs.sonames if s.startswith("libQt6")]


def test_a_library_the_list_does_not_name_stops_the_build_naming_it(
    modules, tmp_path: Path
) -> None:
    system_libraries, _, _ = modules
    bundle = _bundle(tmp_path)
    known = {k: v for k, v in system_libraries.PACKAGES.items() if k != "libxcb-cursor.so.0"}
    with pytest.raises(system_libraries.UnknownLibraries) as caught:
        system_libraries.system_needs(bundle, known)
    assert (
        "libxcb-cursor.so.0 (needed by _internal/PySide6/Qt/plugins/platforms/libqxcb.so)"
        in str(caught.value)
    )


def test_each_listed_library_found_here_belongs_to_the_package_named(modules) -> None:
    """The hand-written list against dpkg's own records, for the libraries installed here."""
    system_libraries, _, _ = modules
    if not shutil.which("ldconfig") and not Path("/sbin/ldconfig").exists():
        pytest.skip("no ldconfig")
    cache = subprocess.run(
        [shutil.which("ldconfig") or "/sbin/ldconfig", "-p"], capture_output=True, text=True
    ).stdout
    paths: dict[str, str] = {}
    for line in cache.splitlines():
        name, _, where = line.strip().partition(" => ")
        soname = name.split(" (", 1)[0]
        if where and "x86-64" in name and soname not in paths:
            paths[soname] = where
    candidates: dict[str, str] = {}  # path as dpkg may record it -> soname
    for soname in system_libraries.PACKAGES:
        if soname in paths:
            real = str(Path(paths[soname]).resolve())
            for path in (paths[soname], real, real.replace("/usr/lib/", "/lib/", 1)):
                candidates.setdefault(path, soname)
    # One dpkg -S for all of them: it prints "package:arch: path" for each path it knows.
    done = subprocess.run(["dpkg", "-S", *candidates], capture_output=True, text=True)
    owners: dict[str, str] = {}
    for line in done.stdout.splitlines():
        package, _, path = line.partition(": ")
        if path in candidates:
            owners[candidates[path]] = package.split(":", 1)[0]
    for soname, owner in owners.items():
        package = system_libraries.PACKAGES[soname]
        assert owner == package, f"{soname} is in {owner}, the list says {package}"
    checked = len(owners)
    assert checked >= 5  # libc6, libstdc++6, zlib1g... are on every Debian system


def test_the_deb_installs_the_bundle_under_opt_with_a_menu_entry_and_its_depends(
    modules, tmp_path: Path
) -> None:
    _, debian_package, _ = modules
    deb = debian_package.build(_bundle(tmp_path), tmp_path / "out")
    version = debian_package.project()["version"]
    assert deb.name == f"meaningbench_{version}_{debian_package.architecture()}.deb"
    assert not [p for p in deb.parent.iterdir() if p.name.startswith(".")]  # no partial file left

    def field(name: str) -> str:
        done = subprocess.run(
            ["dpkg-deb", "--field", str(deb), name], capture_output=True, text=True
        )
        return done.stdout.strip()

    assert field("Package") == "meaningbench"
    assert field("Section") == "science"
    depends = field("Depends").split(", ")
    assert "libxcb-cursor0" in depends and "libc6" in depends
    tree = tmp_path / "tree"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
    assert (tree / "opt/meaningbench/MeaningBench").is_file()
    assert str((tree / "usr/bin/meaningbench").readlink()) == "/opt/meaningbench/meaningbench"
    entry = (tree / "usr/share/applications/meaningbench.desktop").read_text()
    assert entry == (PACKAGING / "meaningbench.desktop").read_text()
    assert "Science" in entry and "Education" in entry
    assert "MimeType=application/x-meaningbench-study;" in entry
    assert (tree / "usr/share/mime/packages/meaningbench.xml").is_file()
    assert (tree / "usr/share/icons/hicolor/scalable/apps/meaningbench.svg").is_file()
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True).stdout
    assert all(" root/root " in line for line in listing.splitlines())
    size_kib = int(field("Installed-Size"))
    on_disk = sum(p.lstat().st_size for p in tree.rglob("*") if p.is_file() or p.is_symlink())
    assert on_disk / 1024 <= size_kib <= on_disk / 1024 + 4 * (len(list(tree.rglob("*"))) + 1)
    # No maintainer scripts: dpkg's triggers refresh the menu and MIME caches.
    control = subprocess.run(["dpkg-deb", "-I", str(deb)], capture_output=True, text=True).stdout
    assert "postinst" not in control and "postrm" not in control


def test_the_portable_archive_runs_the_program_and_names_what_to_install(
    modules, tmp_path: Path
) -> None:
    system_libraries, _, portable_archive = modules
    bundle = _bundle(tmp_path)
    archive = portable_archive.build(bundle, tmp_path / "out")
    assert archive.name.endswith("-linux-x86_64.tar.xz") or archive.name.endswith(".tar.xz")
    unpacked = tmp_path / "unpacked"
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        tar.extractall(unpacked, filter="tar")
    (top,) = unpacked.iterdir()
    assert top.name == archive.name.removesuffix(".tar.xz")
    assert all(n.startswith(top.name) for n in names)
    out = subprocess.run([str(top / "run"), "cli", "--version"], capture_output=True, text=True)
    assert out.stdout.strip() == "meaningbench 0.0-test --version"
    out = subprocess.run([str(top / "run"), "study.mbstudy"], capture_output=True, text=True)
    assert out.stdout.strip() == "meaningbench 0.0-test study.mbstudy"
    readme = (top / "README.txt").read_text()
    needs = system_libraries.system_needs(bundle)
    assert system_libraries.apt_command(needs.depends) in readme
    assert "xcb-util-cursor" in readme  # the Fedora name of libxcb-cursor0
    home = tmp_path / "home"
    done = subprocess.run(
        [str(top / "install-desktop-entry")],
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    entry = (home / ".local/share/applications/meaningbench.desktop").read_text()
    assert f'Exec="{top / "run"}" %f' in entry
