"""`make deb`: the PyInstaller bundle as a Debian package, `meaningbench_VERSION_ARCH.deb`.

    python packaging/debian_package.py dist/meaningbench dist

What it installs:
- the bundle under /opt/meaningbench, and /usr/bin/meaningbench, a link to its command line
  (`meaningbench gui` starts the window);
- the desktop entry (menu: Education, Science) with its icon, and the `.mbstudy` file type,
  so that a double-click on a study opens it. Debian's shared-mime-info,
  desktop-file-utils and hicolor-icon-theme refresh their caches through dpkg triggers, so
  the package needs no maintainer scripts, and removing it leaves nothing behind;
- Depends and Recommends on the system libraries the bundle links (X11, xcb, OpenGL,
  fontconfig...), made and checked by system_libraries.py.

Built with dpkg-deb (`--root-owner-group`: every file belongs to root, whoever builds it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from system_libraries import SystemNeeds, system_needs  # beside this script

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "meaningbench"
PREFIX = Path("opt", PACKAGE)
SYNOPSIS = "workbench for measuring meaning preservation in text simplification"
DESCRIPTION = """\
 MeaningBench loads simplification datasets into a study file, gathers human
 ratings of meaning preservation (0-100) in a keyboard-first rating screen,
 runs automatic metrics (BLEU, SARI, BERTScore, Sentence-BERT cosine,
 MeaningBERT, an LLM judge...) in the background, and shows which metric
 agrees best with the human ratings, with significance clusters and sanity
 checks.
 .
 This package holds the desktop program and the `meaningbench` command line,
 with their own Python, PyTorch (CPU) and Qt, and an embedded sentence encoder,
 so they work offline."""


def project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        data: dict[str, object] = tomllib.load(f)["project"]
    return data


def architecture() -> str:
    done = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True)
    return done.stdout.strip() or "amd64"


def installed_size_kib(root: Path) -> int:
    """Debian's Installed-Size: the files' sizes in KiB, as dpkg-gencontrol counts them."""
    total = 0
    for folder, dirs, files in os.walk(root):
        if Path(folder) == root:
            dirs[:] = [d for d in dirs if d != "DEBIAN"]
        total += len(dirs)  # a folder counts as one KiB
        for name in files:
            total += (Path(folder, name).lstat().st_size + 1023) // 1024
    return total


def control(version: str, arch: str, needs: SystemNeeds, size_kib: int) -> str:
    meta = project()
    authors = meta.get("authors") or [{"name": "MeaningBench", "email": "meaningbench@localhost"}]
    first = authors[0] if isinstance(authors, list) and authors else {}
    maintainer = f"{first.get('name', 'MeaningBench')} <{first.get('email', 'meaningbench@localhost')}>"
    fields = [
        f"Package: {PACKAGE}",
        f"Version: {version}",
        f"Architecture: {arch}",
        f"Maintainer: {maintainer}",
        f"Installed-Size: {size_kib}",
        f"Depends: {', '.join(needs.depends)}",
    ]
    if needs.recommends:
        fields.append(f"Recommends: {', '.join(needs.recommends)}")
    fields += ["Section: science", "Priority: optional", f"Description: {SYNOPSIS}", DESCRIPTION]
    return "\n".join(fields) + "\n"


COPYRIGHT = """\
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: MeaningBench

Files: *
License: {license}

Files: opt/meaningbench/_internal/*
Comment: The Python interpreter, libraries and models the program bundles keep their own
 licences; each Python distribution's licence is in its *.dist-info folder there where the
 distribution ships one.
"""


def link_copy(bundle: Path, target: Path) -> None:
    """The bundle at target: hard links where the file system allows (the tree is only
    read, by dpkg-deb or tar), a copy elsewhere."""
    done = subprocess.run(["cp", "-al", str(bundle), str(target)], capture_output=True)
    if done.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(bundle, target, symlinks=True)


def stage(bundle: Path, root: Path, version: str, needs: SystemNeeds) -> None:
    """The package's file tree under root, with its DEBIAN/control."""
    target = root / PREFIX
    target.parent.mkdir(parents=True)
    link_copy(bundle, target)
    usr = root / "usr"
    (usr / "bin").mkdir(parents=True)
    (usr / "bin" / PACKAGE).symlink_to(Path("/", PREFIX, "meaningbench"))
    share = usr / "share"
    for source, dest in (
        ("meaningbench.desktop", "applications/meaningbench.desktop"),
        ("meaningbench.svg", "icons/hicolor/scalable/apps/meaningbench.svg"),
        ("meaningbench-mime.xml", "mime/packages/meaningbench.xml"),
    ):
        path = share / dest
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "packaging" / source, path)
        path.chmod(0o644)
    doc = share / "doc" / PACKAGE
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(COPYRIGHT.format(license=project().get("license", "MIT")))
    debian = root / "DEBIAN"
    debian.mkdir()
    (debian / "control").write_text(control(version, architecture(), needs, installed_size_kib(root)))
    for folder, dirs, _files in os.walk(root):
        for d in dirs:
            Path(folder, d).chmod(0o755)


def build(bundle: Path, out: Path) -> Path:
    if not (bundle / "MeaningBench").is_file():
        raise SystemExit(f"deb: no bundle in {bundle} (make bundle)")
    version = str(project()["version"])
    needs = system_needs(bundle)
    out.mkdir(parents=True, exist_ok=True)
    deb = out / f"{PACKAGE}_{version}_{architecture()}.deb"
    with tempfile.TemporaryDirectory(dir=out, prefix=".deb-root-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)
        stage(bundle, root / "pkg", version, needs)
        partial = out / f".{deb.name}.part"
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", "-Zxz", "-z6", "--build",
             str(root / "pkg"), str(partial)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        partial.replace(deb)
    return deb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path, help="the bundle folder (dist/meaningbench)")
    parser.add_argument("out", type=Path, help="where the .deb goes")
    args = parser.parse_args(argv)
    deb = build(args.bundle, args.out)
    size = deb.stat().st_size / 2**20
    print(f"deb: {deb} ({size:.0f} MiB)")
    print(subprocess.run(["dpkg-deb", "--field", str(deb), "Depends"], capture_output=True,
                         text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
